package codetools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// render is how a host might show each kind of Display: a type switch on
// the payload, one case per built-in kind.
func render(d *llmtoolkit.Display) string {
	if d == nil {
		return "(nothing to show)"
	}
	switch p := d.Payload.(type) {
	case codetools.FilePayload:
		return fmt.Sprintf("[file] %s lines %d-%d of %d", p.Path, p.StartLine, p.EndLine, p.TotalLines)
	case codetools.DiffPayload:
		return fmt.Sprintf("[diff] %s +%d -%d, %d replacement(s), first change at line %d\n%s",
			p.Path, p.Added, p.Removed, p.Replacements, p.FirstChangedLine, p.Diff)
	case codetools.ProcessPayload:
		return fmt.Sprintf("[process] %q exited with %d, output %q", p.Command, p.ExitCode, p.Output)
	case codetools.MatchesPayload:
		lines := make([]string, 0, len(p.Items))
		for _, m := range p.Items {
			lines = append(lines, fmt.Sprintf("  %s:%d %s", m.Path, m.Line, m.Text))
		}
		return fmt.Sprintf("[matches] %q: %d of %d shown\n%s", p.Pattern, p.Shown, p.Total, strings.Join(lines, "\n"))
	case codetools.FilesPayload:
		return fmt.Sprintf("[files] %q: %d of %d shown: %s", p.Pattern, p.Shown, p.Total, strings.Join(p.Paths, ", "))
	case codetools.WebpagePayload:
		return fmt.Sprintf("[webpage] %s: HTTP %d, %s", p.URL, p.Status, p.ContentType)
	default: // another tool's kind, or one read back from JSON: see DecodeDisplay
		return fmt.Sprintf("[%s] %v", d.Kind, p)
	}
}

// A host renders what each tool shows with a type switch on the Display's
// payload.
func Example_displayTypeSwitch() {
	dir, err := os.MkdirTemp("", "codetools-display")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	err = os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("todo: write\ndone: read\ntodo: test\n"), 0o644)
	if err != nil {
		log.Fatal(err)
	}
	tools, err := codetools.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close()

	ctx := context.Background()
	for _, call := range []llmtoolkit.Call{
		{Name: "read_file", Arguments: map[string]any{"path": "notes.txt", "limit": 2}},
		{Name: "grep", Arguments: map[string]any{"pattern": "todo", "limit": 1}},
		{Name: "glob", Arguments: map[string]any{"pattern": "*.txt"}},
		{Name: "edit_file", Arguments: map[string]any{"path": "notes.txt", "oldText": "todo: test", "newText": "done: test"}},
		{Name: "bash", Arguments: map[string]any{"command": "grep -c done notes.txt"}},
	} {
		res := llmtoolkit.Execute(ctx, tools, call)
		fmt.Println(render(res.Display))
	}
	// Output:
	// [file] notes.txt lines 1-2 of 3
	// [matches] "todo": 1 of 2 shown
	//   notes.txt:1 todo: write
	// [files] "*.txt": 1 of 1 shown: notes.txt
	// [diff] notes.txt +1 -1, 1 replacement(s), first change at line 3
	// --- a/notes.txt
	// +++ b/notes.txt
	// @@ -1,3 +1,3 @@
	//  todo: write
	//  done: read
	// -todo: test
	// +done: test
	// [process] "grep -c done notes.txt" exited with 0, output "2"
}

// A Display read back from JSON (as an MCP client gets it) holds a map:
// DecodeDisplay gives it its type again.
func ExampleDecodeDisplay() {
	var remote llmtoolkit.Display
	err := json.Unmarshal([]byte(`{"kind":"files","payload":{"pattern":"*.go","total":12,"shown":1,"paths":["main.go"]}}`), &remote)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%T\n", remote.Payload)
	typed, err := codetools.DecodeDisplay(remote)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(render(&typed))
	// Output:
	// map[string]interface {}
	// [files] "*.go": 1 of 12 shown: main.go
}

// Language servers are opt-in: with them, the change tools append the
// file's errors and warnings to their answers and Displays.
func ExampleWithLanguageServers() {
	tools, err := codetools.New(".",
		codetools.WithLanguageServers(), // the built-in catalog; a missing server is skipped
		codetools.WithLanguageServerLimits(codetools.LanguageServerLimits{Settle: 5 * time.Second}),
		codetools.WithoutDiagnostics("append_to_file"),
	)
	if err != nil {
		panic(err)
	}
	defer tools.Close() // stops the servers it started
}
