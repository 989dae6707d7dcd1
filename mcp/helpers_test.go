package mcp

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// stressEnv names the environment variable that turns on the heaviest
// stress tests (5,000 sessions, every kind of oversized result). CI sets
// it (.ci/run); a plain go test ./... runs a smaller case or leaves them
// out.
const stressEnv = "LLMTOOLKIT_STRESS"

// stress reports whether the heaviest stress tests run.
func stress() bool { return os.Getenv(stressEnv) != "" }

// requireStress skips t unless the stress tests run.
func requireStress(t testing.TB) {
	t.Helper()
	if !stress() {
		t.Skipf("a heavy stress test: set %s=1 to run it (CI does)", stressEnv)
	}
}

// testTimeout is generous: the machine running the tests may be loaded.
const testTimeout = 60 * time.Second

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

var echoSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"text":  map[string]any{"type": "string", "description": "What to echo."},
		"times": map[string]any{"type": "integer", "minimum": 1},
	},
	"required":             []any{"text"},
	"additionalProperties": false,
}

// fixture returns a resolver with one tool of each behaviour the tests need.
func fixture(t testing.TB) *llmtoolkittest.Fake {
	t.Helper()
	return newFixture()
}

// newFixture builds the fixture outside a test (for the subprocess server).
func newFixture() *llmtoolkittest.Fake {
	tool := func(name, desc string, params map[string]any, ann *llmtoolkit.Annotations) llmtoolkit.Tool {
		tl, err := llmtoolkit.NewToolFrom(llmtoolkit.Tool{Name: name, Description: desc, Parameters: params, Annotations: ann})
		if err != nil {
			panic(err)
		}
		return tl
	}
	empty := map[string]any{"type": "object", "properties": map[string]any{}}
	f := &llmtoolkittest.Fake{}
	f.Add(tool("echo", "Echoes the text.", echoSchema, &llmtoolkit.Annotations{ReadOnly: true, Idempotent: true}),
		func(_ context.Context, c llmtoolkit.Call) (string, error) { return c.Arguments["text"].(string), nil })
	f.Add(tool("fail", "Always fails.", empty, &llmtoolkit.Annotations{Destructive: true, OpenWorld: true}),
		func(context.Context, llmtoolkit.Call) (string, error) {
			return "", errors.New("disk full: free some space and retry")
		})
	f.Add(tool("show", "Shows a diff.", empty, nil),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "diff", Payload: map[string]any{"path": "a.txt", "added": float64(2)}})
			return "shown", nil
		})
	f.Add(tool("boom", "Panics.", empty, nil),
		func(context.Context, llmtoolkit.Call) (string, error) { panic("kaboom") })
	return f
}

// serveInMemory connects a server for r and returns the client end of an
// in-memory transport pair.
func serveInMemory(t testing.TB, r llmtoolkit.Resolver, opts ...Option) sdk.Transport {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := NewServer(r, opts...).Connect(testContext(t), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	return ct
}

// sdkClient connects the SDK's own client to a server for r.
func sdkClient(t testing.TB, r llmtoolkit.Resolver, opts ...Option) *sdk.ClientSession {
	t.Helper()
	ct := serveInMemory(t, r, opts...)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "v0"}, nil).Connect(testContext(t), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// ourClient connects this package's Client to a server for r.
func ourClient(t testing.TB, r llmtoolkit.Resolver, opts ...Option) *Client {
	t.Helper()
	c, err := Connect(testContext(t), serveInMemory(t, r, opts...))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}
