package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/llmtoolkit/llmtoolkit/codetools"
)

const toolsUsage = `Usage: llmtoolkit tools [--root DIR] [--json]

Lists the code tools confined to DIR with the first line of their
description, or with --json their full definitions (name, description,
parameters schema, annotations) as an indented JSON array.
`

func runTools(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("tools")
	root := fs.String("root", defaultRoot(), "folder the tools are confined to")
	asJSON := fs.Bool("json", false, "print the tool definitions as JSON")
	pos, code, ok := parseArgs(fs, toolsUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, fs.Name(), fmt.Sprintf("unexpected argument %q", pos[0]))
	}
	ct, err := codetools.New(*root)
	if err != nil {
		fmt.Fprintf(stderr, "llmtoolkit tools: %v; pass an existing folder with --root\n", err)
		return exitError
	}
	defer ct.Close()
	tools := ct.Tools()
	if *asJSON {
		data, err := json.MarshalIndent(tools, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "llmtoolkit tools: encoding the definitions: %v\n", err)
			return exitError
		}
		fmt.Fprintf(stdout, "%s\n", data)
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, t := range tools {
		fmt.Fprintf(tw, "%s\t%s\n", t.Name, summary(t.Description))
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "llmtoolkit tools: %v\n", err)
		return exitError
	}
	return exitOK
}

// summary returns the first line of a description, cut after its first
// sentence so that the listing stays one screen wide.
func summary(description string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(description), "\n")
	if sentence, _, found := strings.Cut(first, ". "); found {
		return sentence + "."
	}
	return first
}
