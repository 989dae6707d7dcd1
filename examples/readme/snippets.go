// Package readme holds the Go snippets of the repository's README.md as
// compiled code: each region between "readme:begin NAME" and "readme:end"
// comments is a fenced block of the README, which names it in an HTML
// comment just above the block ("<!-- snippet: FILE#NAME -->").
// TestReadmeSnippetsAreCompiled (readme_test.go) checks that every Go block
// of the README is such a region, character for character, so the README
// shows only code that builds. The snippets that need a nested module's
// dependencies (otelkit, the adapters) live in that module's
// readme_example_test.go.
package readme

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// QuickStart is the README's quick start: the code tools and a typed
// function, traced, narrowed to one turn's tools, run by the loop with the
// model send. It works in the current folder (path/to/project, traces.db).
func QuickStart(ctx context.Context, send agentloop.SendFunc) error {
	// readme:begin quickstart
	code, _ := codetools.New("path/to/project") // 12 tools, confined to the folder
	defer code.Close()

	type weatherArgs struct {
		City   string `json:"city" jsonschema:"City name, like Lisbon."`
		APIKey string `json:"api_key"`
	}
	domain, _ := agentresolver.New(agentresolver.Func("weather", "Current weather for a city.",
		func(ctx context.Context, a weatherArgs) (string, error) { return "sunny in " + a.City, nil },
		agentresolver.WithSensitiveFields("api_key"))) // never stored: redacted, and scrubbed from results

	db, _ := trace.OpenSQLite("traces.db") // embedded audit trail
	_ = trace.Migrate(db)
	r := trace.Record(llmtoolkit.Compose(code, domain), db) // first match wins; every call traced
	defer r.Close()

	// The audit trail attributes every call to a tenant and a conversation:
	// UUIDs, with the same conversationID on every turn of a conversation.
	tenantID, conversationID := uuid.NewString(), uuid.NewString()

	// One turn: only the declared tools, with the session bound into every call.
	_, session := llmtoolkit.PrepareSession(r, []string{"read_file", "grep", "weather"},
		map[string]any{"tenant_id": tenantID, "conversation_id": conversationID})
	if err := session.Err(); err != nil { // e.g. an ID that is not a UUID
		return err
	}

	messages := []agentloop.Message{agentloop.UserMessage("What is the weather in Lisbon?")}
	final, history, err := agentloop.Run(ctx, messages, send, agentloop.Options{Resolver: session})
	// readme:end
	_, _ = final, history
	return err
}

// readme:begin render
func render(d *llmtoolkit.Display) string {
	if d == nil {
		return ""
	}
	switch p := d.Payload.(type) {
	case codetools.FilePayload: // read_file
		return fmt.Sprintf("%s lines %d-%d of %d\n%s", p.Path, p.StartLine, p.EndLine, p.TotalLines, p.Content)
	case codetools.DiffPayload: // edit_file, multi_edit, write_file
		return fmt.Sprintf("%s +%d -%d (%d replacements)\n%s", p.Path, p.Added, p.Removed, p.Replacements, p.Diff)
	case codetools.ProcessPayload: // bash
		return fmt.Sprintf("$ %s → exit %d in %d ms\n%s", p.Command, p.ExitCode, p.DurationMS, p.Output)
	case codetools.MatchesPayload: // grep
		out := fmt.Sprintf("%q: %d of %d matches", p.Pattern, p.Shown, p.Total)
		for _, m := range p.Items {
			out += fmt.Sprintf("\n%s:%d %s", m.Path, m.Line, m.Text)
		}
		return out
	case codetools.FilesPayload: // glob
		return fmt.Sprintf("%q: %d of %d files: %s", p.Pattern, p.Shown, p.Total, strings.Join(p.Paths, ", "))
	case codetools.WebpagePayload: // http_get
		return fmt.Sprintf("%s: HTTP %d %s", p.URL, p.Status, p.ContentType)
	case agent.TodosPayload: // todo_write
		out := fmt.Sprintf("%d todos", len(p.Todos))
		for _, t := range p.Todos {
			out += fmt.Sprintf("\n[%s] %s", t.Status, t.Content)
		}
		return out
	case agent.SubAgentPayload: // spawn_agent
		return fmt.Sprintf("sub-agent %s: %d iterations, %d tool calls, %d ms", p.ID, p.Iterations, p.ToolCalls, p.DurationMS)
	}
	return d.Kind // another tool's kind
}

// readme:end

// Render is the README's Display renderer.
func Render(d *llmtoolkit.Display) string { return render(d) }

// Sandboxed is the README's sandboxed code tools.
func Sandboxed(root string) (*codetools.CodeTools, error) {
	// readme:begin sandbox
	ct, err := codetools.New(root,
		codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite}),
		codetools.WithSandboxRequired()) // fail here rather than run bash unsandboxed
	// readme:end
	return ct, err
}

// CodingAgent is the README's coding agent: permissions, plan mode, todos
// and sub-agents around the code tools, traced.
func CodingAgent(ctx context.Context, code *codetools.CodeTools, db *gorm.DB, msgs []agentloop.Message, send agentloop.SendFunc,
	askTheUser agent.CanUseTool, redactOutput agent.PostToolUseHook, reviewPlan agent.ApprovePlan,
	showTodos func(ctx context.Context, key string, todos []agent.Todo)) {
	// readme:begin agent
	perms, _ := agent.New(agent.Config{
		Mode:       agent.ModePlan, // read-only until the plan is approved
		Deny:       []agent.Rule{{Tool: "bash", Argument: "command", Regexp: `(^|[;&|]\s*)rm\s`}},
		Allow:      []agent.Rule{{Tool: "todo_write"}, {Tool: "spawn_agent"}},
		CanUseTool: askTheUser, // allow, deny with a message, or allow with changed arguments
		Hooks:      agent.Hooks{PostToolUse: []agent.PostToolUseHook{redactOutput}},
	})
	todos := agent.NewTodos(agent.TodoConfig{OnChange: showTodos})
	spawn, _ := agent.SpawnAgent(agent.SubAgentConfig{Model: send, Tools: code}) // read-only by default
	tools := perms.Guard(trace.Record(llmtoolkit.Compose(code, agent.PlanMode(perms, reviewPlan), todos, spawn), db))
	agentloop.Run(ctx, msgs, send, agentloop.Options{Resolver: tools, Stop: perms.Stop})
	// readme:end
}

// ToolSearch is the README's large toolset: an MCP server's tools
// deferred, found by the model with tool_search.
func ToolSearch(ctx context.Context, code *codetools.CodeTools, github *mcp.Client, perms *agent.Permissions, db *gorm.DB,
	msgs []agentloop.Message, send agentloop.SendFunc) {
	// readme:begin toolsearch
	all := llmtoolkit.Compose(code, llmtoolkit.Defer(github))   // the code tools at once, GitHub's once found
	tools := toolsearch.New(perms.Guard(trace.Record(all, db))) // one per conversation; toolsearch.WithProxy() keeps the list fixed
	agentloop.Run(ctx, msgs, send, agentloop.Options{Resolver: tools})
	// readme:end
}
