package llmtoolkittest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFake(t *testing.T) {
	boom := errors.New("boom")
	schema := llmtoolkit.MustTool("typed", "Typed.", map[string]any{
		"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"},
	})
	f := llmtoolkittest.NewFake(map[string]string{"b": "B", "a": "A"}).
		Fails("err", boom).
		Handle("echo", func(_ context.Context, c llmtoolkit.Call) (string, error) { return fmt.Sprint(c.Arguments["x"]), nil }).
		Add(schema, func(context.Context, llmtoolkit.Call) (string, error) { return "typed ok", nil }).
		Returns("a", "A2")

	var names []string
	for _, tool := range f.Tools() {
		names = append(names, tool.Name)
	}
	assert.Equal(t, []string{"a", "b", "err", "echo", "typed"}, names, "name order from the map, then insertion order; replacing keeps the place")

	ctx := context.Background()
	tests := []struct {
		call      llmtoolkit.Call
		want      string
		wantError bool
	}{
		{call: llmtoolkit.Call{Name: "a"}, want: "A2"},
		{call: llmtoolkit.Call{Name: "b"}, want: "B"},
		{call: llmtoolkit.Call{Name: "err"}, want: "boom", wantError: true},
		{call: llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"x": 7}}, want: "7"},
		{call: llmtoolkit.Call{Name: "typed", Arguments: map[string]any{"n": "x"}}, want: `invalid arguments for tool "typed": /n: expected integer, but got string`, wantError: true},
		{call: llmtoolkit.Call{Name: "nope"}, want: `unknown tool: "nope". Available tools: a, b, err, echo, typed`, wantError: true},
	}
	for _, tt := range tests {
		res := llmtoolkit.Execute(ctx, f, tt.call)
		assert.Equal(t, tt.want, res.Content, tt.call.Name)
		assert.Equal(t, tt.wantError, res.IsError, tt.call.Name)
	}
	// The invalid call never reached the fake; the unknown one did.
	calls := f.Calls()
	require.Len(t, calls, 5)
	assert.Equal(t, "nope", calls[4].Name)
	assert.Len(t, f.CallsTo("a"), 1)
	f.Reset()
	assert.Empty(t, f.Calls())
}

func TestFakeConcurrent(t *testing.T) {
	f := llmtoolkittest.NewFake(map[string]string{"x": "ok"})
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 20 {
				_, err := f.Resolve(context.Background(), llmtoolkit.Call{Name: "x"})
				assert.NoError(t, err)
				_ = f.Tools()
			}
		})
	}
	wg.Wait()
	assert.Len(t, f.CallsTo("x"), 1000)
}
