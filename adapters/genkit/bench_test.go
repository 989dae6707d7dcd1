package genkitadapter_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	genkitadapter "github.com/llmtoolkit/llmtoolkit/adapters/genkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// BenchmarkCall compares one call of a trivial tool (the adapter's own
// cost, beside a native genkit tool's) and one read_file call through the adapter (genkit's
// RunRaw: input encoded to JSON, a genkit action span, Execute, output
// decoded) with a direct llmtoolkit.Execute.
func BenchmarkCall(b *testing.B) {
	dir := b.TempDir()
	require.NoError(b, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644))
	ct, err := codetools.New(dir)
	require.NoError(b, err)
	defer ct.Close()
	ctx := context.Background()
	echo := &stub{
		tools: []llmtoolkit.Tool{llmtoolkit.MustTool("echo", "Echoes.", objectSchema("text"))},
		run: map[string]func(context.Context, llmtoolkit.Call) (string, error){
			"echo": func(_ context.Context, c llmtoolkit.Call) (string, error) { return c.Arguments["text"].(string), nil },
		},
	}
	bench(b, ctx, echo, "echo", map[string]any{"text": "hi"}, "echo")
	// genkit's own tool of the same schema: what any genkit tool call costs
	// (an action span with its input and output as JSON attributes).
	native := ai.NewTool("echo", "Echoes.", func(_ *ai.ToolContext, in any) (any, error) {
		return in.(map[string]any)["text"], nil
	}, ai.WithInputSchema(objectSchema("text")))
	b.Run("echo/genkit-native", func(b *testing.B) {
		for b.Loop() {
			if _, err := native.RunRaw(ctx, map[string]any{"text": "hi"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	bench(b, ctx, ct, "read_file", map[string]any{"path": "a.txt"}, "read_file")
}

func bench(b *testing.B, ctx context.Context, r llmtoolkit.Resolver, name string, args map[string]any, label string) {
	b.Run(label+"/direct", func(b *testing.B) {
		for b.Loop() {
			res := llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: name, Arguments: args})
			if res.IsError {
				b.Fatal(res.Content)
			}
		}
	})
	b.Run(label+"/genkit", func(b *testing.B) {
		var read interface {
			RunRaw(context.Context, any) (any, error)
		}
		for _, tool := range genkitadapter.Tools(r) {
			if tool.Name() == name {
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
