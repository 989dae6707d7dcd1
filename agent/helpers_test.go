package agent_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// quiet keeps logs out of the test output.
var quiet = slog.New(slog.DiscardHandler)

func schema(props map[string]any, required ...string) map[string]any {
	req := make([]any, len(required))
	for i, r := range required {
		req[i] = r
	}
	return map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}
}

var str = map[string]any{"type": "string"}

// workspace is a fake coding agent's tools, one of each kind: read_file
// (read-only), write_file (edit), bash (other).
func workspace() *lt.Fake {
	read := llmtoolkit.MustTool("read_file", "Reads a file.", schema(map[string]any{"path": str}, "path"))
	read.Annotations = &llmtoolkit.Annotations{ReadOnly: true}
	write := llmtoolkit.MustTool("write_file", "Writes a file.", schema(map[string]any{"path": str, "content": str}, "path", "content"))
	write.Annotations = &llmtoolkit.Annotations{Destructive: true}
	bash := llmtoolkit.MustTool("bash", "Runs a command.", schema(map[string]any{"command": str}, "command"))
	bash.Annotations = &llmtoolkit.Annotations{Destructive: true}
	ok := func(_ context.Context, call llmtoolkit.Call) (string, error) { return call.Name + " ran", nil }
	return (&lt.Fake{}).Add(read, ok).Add(write, ok).Add(bash, ok)
}

// calls of each kind, with valid arguments.
var kindCalls = map[agent.Kind]llmtoolkit.Call{
	agent.KindReadOnly: {ID: "r", Name: "read_file", Arguments: map[string]any{"path": "a.go"}},
	agent.KindEdit:     {ID: "e", Name: "write_file", Arguments: map[string]any{"path": "a.go", "content": "x"}},
	agent.KindOther:    {ID: "b", Name: "bash", Arguments: map[string]any{"command": "go test ./..."}},
	agent.KindUnknown:  {ID: "u", Name: "launch_rockets", Arguments: map[string]any{}},
}

func newPerms(t testing.TB, cfg agent.Config) *agent.Permissions {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	p, err := agent.New(cfg)
	require.NoError(t, err)
	return p
}

func toolNames(tools []llmtoolkit.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

// TestMain keeps the panics Execute logs (through slog.Default) out of the
// test output.
func TestMain(m *testing.M) {
	testkit.FakeLanguageServer()
	slog.SetDefault(quiet)
	m.Run()
}
