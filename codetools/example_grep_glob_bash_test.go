package codetools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// grep searches file contents, honouring .gitignore.
func ExampleCodeTools_grep() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\n// main says hi.\nfunc main() {\n\tprintln(\"hi\")\n}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.tmp\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scratch.tmp"), []byte("func ignored()\n"), 0o644)

	ct, _ := codetools.New(dir)
	defer ct.Close()
	res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{
		Name:      "grep",
		Arguments: map[string]any{"pattern": `func \w+\(`, "context": 1},
	})
	fmt.Println(res.Content)
	// Output:
	// main.go-3- // main says hi.
	// main.go:4: func main() {
	// main.go-5- 	println("hi")
}

// glob finds files by name, newest first.
func ExampleCodeTools_glob() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "cmd", "app"), 0o755)
	os.WriteFile(filepath.Join(dir, "cmd", "app", "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# app\n"), 0o644)

	ct, _ := codetools.New(dir)
	defer ct.Close()
	res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{
		Name:      "glob",
		Arguments: map[string]any{"pattern": "**/*.go"},
	})
	fmt.Println(res.Content)
	// Output:
	// cmd/app/main.go
}

// bash runs a command in the root; a non-zero exit is an error result.
func ExampleCodeTools_bash() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	ct, _ := codetools.New(dir)
	defer ct.Close()

	res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{
		Name:      "bash",
		Arguments: map[string]any{"command": "echo hello; echo oops >&2; exit 1"},
	})
	fmt.Println(res.IsError)
	fmt.Println(res.Content)
	// Output:
	// true
	// hello
	// oops
	//
	// Command exited with code 1
}
