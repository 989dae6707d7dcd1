// Command quickstart runs a whole agent session with no network and no API
// key: a scripted model fixes a ticket in a temporary copy of a small sample
// project, using the built-in code tools and a domain tool, with every tool
// call traced into an SQLite file.
//
// It shows, in one place:
//   - codetools.New: the file, search and shell tools, confined to a folder;
//   - agentresolver.Func: a domain tool from a typed Go function;
//   - llmtoolkit.Compose: both behind one resolver;
//   - trace.Record: every call written to an audit table;
//   - llmtoolkit.PrepareSession: the turn may use only the tools it declares;
//   - agentloop.Run: the loop, here with llmtoolkittest.ScriptedModel in place
//     of a real model (swap in a SendFunc built on package provider).
//
// Run it with: go run ./examples/quickstart
package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

//go:embed all:testdata/sample
var sample embed.FS

const (
	tenantID       = "7d1f5a3c-2b4e-4c8a-9f10-0a1b2c3d4e5f"
	conversationID = "0e9d8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// ticketArgs are the arguments of the domain tool, described by tags.
type ticketArgs struct {
	ID string `json:"id" jsonschema:"The ticket's ID, like TICKET-7."`
}

func run(ctx context.Context, out io.Writer) error {
	work, err := os.MkdirTemp("", "llmtoolkit-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := copySample(work); err != nil {
		return err
	}

	code, err := codetools.New(work)
	if err != nil {
		return err
	}
	defer code.Close()

	tickets, err := agentresolver.New(agentresolver.Func("lookup_ticket",
		"Looks up a ticket of the project's tracker by its ID and returns its text.",
		func(_ context.Context, a ticketArgs) (string, error) {
			if a.ID != "TICKET-7" {
				return "", fmt.Errorf("no ticket %q; known tickets: TICKET-7", a.ID)
			}
			return `TICKET-7: the greeting must read "Hello, NAME!" instead of "Hi NAME".`, nil
		}, agentresolver.WithReadOnly()))
	if err != nil {
		return err
	}

	db, err := trace.OpenSQLite(filepath.Join(work, ".traces.db"))
	if err != nil {
		return err
	}
	if err := trace.Migrate(db); err != nil {
		return err
	}
	recorder := trace.Record(llmtoolkit.Compose(code, tickets), db)
	defer recorder.Close()

	// This turn may use only these tools; the session map reaches every tool
	// (and names the conversation in the traces).
	tools, session := llmtoolkit.PrepareSession(recorder,
		[]string{"lookup_ticket", "read_file", "grep", "edit_file", "bash"},
		map[string]any{"tenant_id": tenantID, "conversation_id": conversationID})

	model := llmtoolkittest.NewScriptedModel(stderrTB{},
		llmtoolkittest.CallTools(llmtoolkittest.Call("lookup_ticket", map[string]any{"id": "TICKET-7"})),
		llmtoolkittest.CallTools(
			llmtoolkittest.Call("grep", map[string]any{"pattern": `"Hi `, "literal": true}),
			llmtoolkittest.Call("read_file", map[string]any{"path": "greet.go"}),
		),
		llmtoolkittest.CallTools(llmtoolkittest.Call("edit_file", map[string]any{
			"path":    "greet.go",
			"oldText": `return "Hi " + name // TICKET-7: should be "Hello, NAME!"`,
			"newText": `return "Hello, " + name + "!"`,
		})),
		llmtoolkittest.CallTools(llmtoolkittest.Call("bash", map[string]any{"command": "grep -n Hello greet.go && echo 'check: ok'"})),
		llmtoolkittest.Reply("Fixed TICKET-7: Greeting now returns \"Hello, NAME!\"."),
	)

	fmt.Fprintf(out, "Workspace: a temporary copy of examples/quickstart/testdata/sample\nTools offered this turn: %s\n\n", names(tools))
	messages := []agentloop.Message{
		agentloop.SystemMessage("You are a careful coding agent."),
		agentloop.UserMessage("Please fix TICKET-7."),
	}
	fmt.Fprintln(out, "user> Please fix TICKET-7.")
	final, _, err := agentloop.Run(ctx, messages, model.Send, agentloop.Options{
		Resolver:    session, // lists the declared tools: validation and every per-tool fact come with it
		MaxParallel: 1,
		Logger:      slog.New(slog.DiscardHandler),
		OnEvent: func(e agentloop.Event) {
			switch e.Kind {
			case agentloop.EventToolCall:
				fmt.Fprintf(out, "\n[%d] call %s %s\n", e.Iteration, e.Call.Name, compactArgs(e.Call.Arguments))
			case agentloop.EventToolResult:
				status := "ok"
				if e.Result.IsError {
					status = "error"
				}
				fmt.Fprintf(out, "    -> %s:\n%s\n", status, indent(e.Result.Content, 8, 12))
			}
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nassistant> %s\n", final.Content)

	if err := recorder.Close(); err != nil {
		return err
	}
	rows, err := trace.List(ctx, db, trace.Filter{ConversationID: conversationID})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nAudit trail (tool_traces, newest first, %d rows):\n", len(rows))
	for _, r := range rows {
		fmt.Fprintf(out, "  %s  %-14s %-5s %4d ms  %s\n", r.InsertedAt.Format(time.TimeOnly), r.ToolName, r.ResultType, r.DurationMS, compactArgs(r.Arguments))
	}
	return nil
}

// copySample writes the embedded sample project into dir.
func copySample(dir string) error {
	return fs.WalkDir(sample, "testdata/sample", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, strings.TrimPrefix(strings.TrimPrefix(path, "testdata/sample"), "/"))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := sample.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

func names(tools []llmtoolkit.Tool) string {
	n := make([]string, len(tools))
	for i, t := range tools {
		n[i] = t.Name
	}
	return strings.Join(n, ", ")
}

func compactArgs(args map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(args) {
		v := fmt.Sprintf("%q", fmt.Sprint(args[k]))
		if len(v) > 50 {
			v = v[:47] + `..."`
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// indent prefixes each line with n spaces, keeping at most max lines.
func indent(s string, n, max int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > max {
		lines = append(lines[:max], fmt.Sprintf("... (%d more lines)", len(lines)-max))
	}
	pad := strings.Repeat(" ", n)
	return pad + strings.Join(lines, "\n"+pad)
}

// stderrTB reports a script that ran out on stderr.
type stderrTB struct{}

func (stderrTB) Helper() {}

func (stderrTB) Errorf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
