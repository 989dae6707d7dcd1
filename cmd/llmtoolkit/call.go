package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

const callUsage = `Usage: llmtoolkit call NAME [ARGS_JSON|-] [--root DIR]
                      [--sandbox MODE] [--sandbox-network] [--sandbox-backend NAME]

Runs one code tool and prints its result to stdout. ARGS_JSON is a JSON
object of arguments; when it is omitted or "-", it is read from stdin
(unless stdin is a terminal, in which case the call has no arguments).
Flags may come before or after the arguments.

Exit status: 0 on success; 1 when the tool fails, with the error message
printed to stdout (it is what a model would see), or when the arguments
are not valid JSON (message on stderr); 2 on a wrong command line.

When OTEL_EXPORTER_OTLP_ENDPOINT is set, the call is exported as an
OpenTelemetry span with OTLP over HTTP (configured by the standard OTEL_*
variables).
` + sandboxUsage

func runCall(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("call")
	root := fs.String("root", defaultRoot(), "folder the tools are confined to")
	sandboxOpts := sandboxFlags(fs)
	pos, code, ok := parseArgs(fs, callUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	switch {
	case len(pos) == 0:
		return usageError(stderr, fs.Name(), "missing the tool name (see 'llmtoolkit tools')")
	case len(pos) > 2:
		return usageError(stderr, fs.Name(), fmt.Sprintf("unexpected argument %q (quote the JSON arguments as one argument)", pos[2]))
	}
	name, argsJSON := pos[0], "-"
	if len(pos) == 2 {
		argsJSON = pos[1]
	}
	if argsJSON == "-" {
		argsJSON = ""
		if stdin != nil && !isTerminal(stdin) {
			data, err := io.ReadAll(stdin)
			if err != nil {
				fmt.Fprintf(stderr, "llmtoolkit call: reading the arguments from stdin: %v\n", err)
				return exitError
			}
			argsJSON = strings.TrimSpace(string(data))
		}
	}
	call, err := llmtoolkit.ParseCall("", name, argsJSON)
	if err != nil {
		fmt.Fprintf(stderr, "llmtoolkit call: %v; pass the arguments as one JSON object, such as '{\"path\":\"a.txt\"}'\n", err)
		return exitError
	}
	opts, err := sandboxOpts()
	if err != nil {
		return usageError(stderr, fs.Name(), err.Error())
	}
	ct, err := codetools.New(*root, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "llmtoolkit call: %v; pass an existing folder with --root\n", err)
		return exitError
	}
	defer ct.Close()
	tel, err := startTelemetry(ctx, func(err error) { fmt.Fprintf(stderr, "llmtoolkit call: OpenTelemetry: %v\n", err) })
	if err != nil {
		fmt.Fprintf(stderr, "llmtoolkit call: %v\n", err)
		return exitError
	}
	defer func() {
		if err := tel.close(); err != nil {
			fmt.Fprintf(stderr, "llmtoolkit call: %v\n", err)
		}
	}()
	res := llmtoolkit.Execute(ctx, tel.instrument(ct), call)
	fmt.Fprint(stdout, res.Content)
	if !strings.HasSuffix(res.Content, "\n") {
		fmt.Fprintln(stdout)
	}
	if res.IsError {
		return exitError
	}
	return exitOK
}

// isTerminal reports whether r is a character device such as a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	if err != nil {
		return false
	}
	return info.Mode()&os.ModeCharDevice != 0
}
