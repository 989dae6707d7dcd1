package agentresolver_test

import (
	"context"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
)

// benchArgs is the 3-field struct of the benchmark the issue sets (goal:
// under 5 µs and 20 allocations per call, validation and decode included).
type benchArgs struct {
	Path  string `json:"path" jsonschema:"file to read"`
	Limit int    `json:"limit,omitempty" jsonschema:"lines at most"`
	Mode  string `json:"mode" jsonschema_enum:"text,binary"`
}

func benchResolver(b *testing.B) *agentresolver.Resolver {
	b.Helper()
	r, err := agentresolver.New(agentresolver.Func("read", "Read a file.",
		func(_ context.Context, a benchArgs) (string, error) { return a.Path, nil }))
	if err != nil {
		b.Fatal(err)
	}
	return r
}

var benchCall = llmtoolkit.Call{Name: "read", Arguments: map[string]any{"path": "a/b.txt", "limit": float64(10), "mode": "text"}}

// BenchmarkFuncResolve measures Resolve on a Func tool: lookup, validation,
// decode into the struct, the call and panic protection.
func BenchmarkFuncResolve(b *testing.B) {
	r := benchResolver(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out, err := r.Resolve(ctx, benchCall)
		if err != nil || out != "a/b.txt" {
			b.Fatal(out, err)
		}
	}
}

// BenchmarkFuncResolveInvalid measures a call refused by validation.
func BenchmarkFuncResolveInvalid(b *testing.B) {
	r := benchResolver(b)
	ctx := context.Background()
	call := llmtoolkit.Call{Name: "read", Arguments: map[string]any{"path": 3.0, "mode": "zip"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Resolve(ctx, call); err == nil {
			b.Fatal("no error")
		}
	}
}

// BenchmarkFuncExecute measures llmtoolkit.Execute on the same tool: it adds
// Execute's own schema validation (the generic validator) before Resolve.
func BenchmarkFuncExecute(b *testing.B) {
	r := benchResolver(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := llmtoolkit.Execute(ctx, r, benchCall); res.IsError {
			b.Fatal(res.Content)
		}
	}
}
