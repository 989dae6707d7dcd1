package genkitadapter_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	genkitadapter "github.com/llmtoolkit/llmtoolkit/adapters/genkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// BenchmarkCall compares one read_file call through the adapter (genkit's
// RunRaw: input encoded to JSON, a genkit action span, Execute, output
// decoded) with a direct llmtoolkit.Execute.
func BenchmarkCall(b *testing.B) {
	dir := b.TempDir()
	require.NoError(b, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644))
	ct, err := codetools.New(dir)
	require.NoError(b, err)
	defer ct.Close()
	ctx := context.Background()
	args := map[string]any{"path": "a.txt"}

	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			res := llmtoolkit.Execute(ctx, ct, llmtoolkit.Call{Name: "read_file", Arguments: args})
			if res.IsError {
				b.Fatal(res.Content)
			}
		}
	})
	b.Run("genkit", func(b *testing.B) {
		var read interface {
			RunRaw(context.Context, any) (any, error)
		}
		for _, tool := range genkitadapter.Tools(ct) {
			if tool.Name() == "read_file" {
				read = tool
			}
		}
		require.NotNil(b, read)
		for b.Loop() {
			out, err := read.RunRaw(ctx, args)
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := out.(string); !ok {
				b.Fatal(out)
			}
		}
	})
}
