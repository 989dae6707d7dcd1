package codetools_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// Build the tools over a folder, then run the calls a model makes with
// llmtoolkit.Execute: read a file, edit it, and see the diff.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "codetools-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	err = os.WriteFile(filepath.Join(dir, "greet.go"), []byte("package greet\n\nconst Greeting = \"Hello, world!\"\n"), 0o644)
	if err != nil {
		log.Fatal(err)
	}

	tools, err := codetools.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close()

	ctx := context.Background()
	res := llmtoolkit.Execute(ctx, tools, llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "greet.go", "offset": 3}})
	fmt.Println(res.Content)

	res = llmtoolkit.Execute(ctx, tools, llmtoolkit.Call{Name: "edit_file", Arguments: map[string]any{
		"path": "greet.go", "oldText": "world", "newText": "gophers",
	}})
	fmt.Println(res.Content)
	if diff, ok := res.Display.Payload.(codetools.DiffPayload); ok {
		fmt.Println("display:", res.Display.Kind, diff.FirstChangedLine)
	}

	res = llmtoolkit.Execute(ctx, tools, llmtoolkit.Call{Name: "edit_file", Arguments: map[string]any{
		"path": "greet.go", "oldText": "Hello", "newText": "Hello",
	}})
	fmt.Println(res.IsError, res.Content)
	// Output:
	// const Greeting = "Hello, world!"
	// Successfully replaced text in greet.go.
	//
	//  1 package greet
	//  2
	// -3 const Greeting = "Hello, world!"
	// +3 const Greeting = "Hello, gophers!"
	// display: diff 3
	// true no changes made to greet.go: the replacement produced identical content
}

// Ask for a sandbox where one works, and say how bash runs: the same text
// as the "process" Display's Sandbox field (for example "bubblewrap
// (workspace-write, no network)", or "none: REASON" where no backend runs).
func ExampleCodeTools_Sandbox() {
	dir, err := os.MkdirTemp("", "codetools-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tools, err := codetools.New(dir, codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite}))
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close()
	fmt.Fprintln(os.Stderr, "bash runs:", tools.Sandbox())
}

// Close the network but for a package registry: bash's commands reach it
// through the sandbox's proxy (HTTPS_PROXY points to it), http_get by the
// same list; any other host, and any IP address, is refused.
func ExampleSandboxPolicy_allowHosts() {
	dir, err := os.MkdirTemp("", "codetools-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tools, err := codetools.New(dir, codetools.WithSandbox(codetools.SandboxPolicy{
		Mode:       codetools.SandboxWorkspaceWrite,
		AllowHosts: []string{"registry.npmjs.org", "*.pythonhosted.org"},
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close()
	for _, url := range []string{"https://example.com/", "https://93.184.215.14/"} {
		res := llmtoolkit.Execute(context.Background(), tools, llmtoolkit.Call{Name: "http_get", Arguments: map[string]any{"url": url}})
		fmt.Println(url, "refused:", errors.Is(res.Err, codetools.ErrHostNotAllowed))
	}
	// Output:
	// https://example.com/ refused: true
	// https://93.184.215.14/ refused: true
}

// Give a model the tools it was trained on: Claude gets Anthropic's text
// editor (declared to Anthropic as its built-in tool) beside the function
// tools; a GPT-5 model gets apply_patch and shell, native to the Responses API; any other model the function tools.
func ExampleWithModelTools() {
	dir, err := os.MkdirTemp("", "codetools-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	for _, model := range []string{"claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro"} {
		tools, err := codetools.New(dir, codetools.WithModelTools(model, ""))
		if err != nil {
			log.Fatal(err)
		}
		all := tools.Tools()
		last := all[len(all)-1]
		fmt.Printf("%s: %d tools, the last %s (native %q)\n", model, len(all), last.Name, last.Native)
		tools.Close()
	}
	// Output:
	// claude-sonnet-4-5: 13 tools, the last str_replace_based_edit_tool (native "anthropic/text_editor_20250728")
	// gpt-5: 14 tools, the last shell (native "openai/shell")
	// gemini-2.5-pro: 12 tools, the last http_get (native "")
}
