package agent_test

import (
	"context"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// instant is a resolver with one bash-like tool that answers at once.
type instant struct{ tool llmtoolkit.Tool }

func (r instant) Tools() []llmtoolkit.Tool { return []llmtoolkit.Tool{r.tool} }
func (r instant) LookupTool(name string) (llmtoolkit.Tool, bool) {
	return r.tool, name == r.tool.Name
}
func (instant) Resolve(context.Context, llmtoolkit.Call) (string, error) { return "ok", nil }

// BenchmarkGuard measures what the permission check and the hooks add to
// one call through llmtoolkit.Execute: "bare" is the call without a guard,
// the others add the guard with rules (two deny rules, a regexp and a glob,
// that do not match, then a matching allow rule), hooks (one PreToolUse and
// one PostToolUse that change nothing) and a callback.
func BenchmarkGuard(b *testing.B) {
	bash := llmtoolkit.MustTool("bash", "Runs a command.", schema(map[string]any{"command": str}, "command"))
	r := instant{tool: bash}
	call := llmtoolkit.Call{ID: "1", Name: "bash", Arguments: map[string]any{"command": "go test ./..."}}
	deny := []agent.Rule{
		{Tool: "bash", Argument: "command", Regexp: `(^|[;&|]\s*)rm\s`},
		{Tool: "write_file", Argument: "path", Glob: ".git/**"},
	}
	allow := []agent.Rule{{Tool: "bash", Argument: "command", Regexp: `^go (test|vet) [./a-z]+$`}}
	hooks := agent.Hooks{
		PreToolUse:  []agent.PreToolUseHook{func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision { return agent.Allow() }},
		PostToolUse: []agent.PostToolUseHook{func(_ context.Context, _ llmtoolkit.Call, content string) string { return content }},
	}
	callback := func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision { return agent.Allow() }
	for _, bc := range []struct {
		name string
		cfg  *agent.Config // nil: no guard
	}{
		{"bare", nil},
		{"bypass", &agent.Config{Mode: agent.ModeBypass}},
		{"callback", &agent.Config{CanUseTool: callback}},
		{"rules", &agent.Config{Deny: deny, Allow: allow, CanUseTool: callback}},
		{"rules+hooks", &agent.Config{Deny: deny, Allow: allow, Hooks: hooks, CanUseTool: callback}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var res llmtoolkit.Resolver = r
			if bc.cfg != nil {
				res = newPerms(b, *bc.cfg).Guard(r)
			}
			ctx := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.StartTurn(1) })
			b.ReportAllocs()
			for b.Loop() {
				if out := llmtoolkit.Execute(ctx, res, call); out.IsError {
					b.Fatal(out.Content)
				}
			}
		})
	}
}

// BenchmarkGuardPaths measures the guard on a tool that declares its path
// argument (codetools' read_file, answered at once): the canonical path
// (resolved in a real folder) and two deny rules on it, one of them a
// rule whose glob is handed to the tool as an exclusion.
func BenchmarkGuardPaths(b *testing.B) {
	code, err := codetools.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer code.Close()
	read, _ := code.LookupTool("read_file")
	r := instant{tool: read}
	call := llmtoolkit.Call{ID: "1", Name: "read_file", Arguments: map[string]any{"path": "src/app/main.go"}}
	deny := []agent.Rule{{Tool: "*", Argument: "path", Glob: "secrets/**"}, {Tool: "read_file", Argument: "path", Glob: "**/*.pem"}}
	for _, bc := range []struct {
		name string
		cfg  *agent.Config
	}{
		{"bare", nil},
		{"bypass", &agent.Config{Mode: agent.ModeBypass}},
		{"rules", &agent.Config{Mode: agent.ModeAcceptEdits, Deny: deny}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var res llmtoolkit.Resolver = r
			if bc.cfg != nil {
				res = newPerms(b, *bc.cfg).Guard(r)
			}
			ctx := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.StartTurn(1) })
			b.ReportAllocs()
			for b.Loop() {
				if out := llmtoolkit.Execute(ctx, res, call); out.IsError {
					b.Fatal(out.Content)
				}
			}
		})
	}
}
