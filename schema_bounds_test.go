package llmtoolkit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doublingSchema is the schema an MCP server can send (1.3 KB at depth
// 20): $defs d1…dN, each a oneOf naming the level below twice, so the
// full validator tries 2^N branches on one value.
func doublingSchema(depth int) map[string]any {
	defs := map[string]any{"d0": map[string]any{"type": "string"}}
	for i := 1; i <= depth; i++ {
		below := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i-1)}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"oneOf": []any{below, below}}
	}
	return map[string]any{
		"type":       "object",
		"$defs":      defs,
		"properties": map[string]any{"x": map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", depth)}},
	}
}

// TestHostileSchemaAnsweredAtDeadline: with the doubling schema at depth
// 20, each Execute took 20–36 s whatever its deadline (depth 24: over
// 65 s). The call is now answered at its deadline, the validation
// stops soon after (no goroutine left running), and without a deadline
// the work is bounded by MaxValidationSteps.
func TestHostileSchemaAnsweredAtDeadline(t *testing.T) {
	tool := MustTool("deep", "A tool with a hostile schema.", doublingSchema(24))
	stub := newStub(map[string]func(context.Context, Call) (string, error){"deep": answer("ran")}, tool)
	call := Call{ID: "c1", Name: "deep", Arguments: map[string]any{"x": 1.0}}

	// await runs fn with a bound, so that the old code fails instead of
	// stalling the run.
	await := func(t *testing.T, bound time.Duration, fn func()) time.Duration {
		t.Helper()
		done := make(chan struct{})
		start := time.Now()
		go func() { defer close(done); fn() }()
		select {
		case <-done:
			return time.Since(start)
		case <-time.After(bound):
			t.Fatalf("still validating after %v", bound)
			return 0
		}
	}

	t.Run("deadline", func(t *testing.T) {
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond) // well before MaxValidationSteps (0.2–0.3 s here)
		defer cancel()
		var res Result
		took := await(t, 5*time.Second, func() { res = Execute(ctx, stub, call) })
		assert.Less(t, took, 1500*time.Millisecond, "answered at the deadline")
		require.True(t, res.IsError)
		assert.ErrorIs(t, res.Err, context.DeadlineExceeded)
		assert.Contains(t, res.Content, `tool "deep" did not finish: its deadline expired`)
		assert.Zero(t, stub.calls.Load(), "the tool did not run")
		// (Not assert.Eventually: it polls from a goroutine of its own.)
		for end := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
		assert.LessOrEqual(t, runtime.NumGoroutine(), before, "the validation stops after the deadline")
	})
	t.Run("no deadline", func(t *testing.T) {
		var err error
		took := await(t, 60*time.Second, func() { err = tool.ValidateArguments(call.Arguments) })
		t.Logf("refused after %v", took)
		require.ErrorIs(t, err, ErrSchemaTooComplex)
		require.ErrorIs(t, err, ErrInvalidArguments)
		assert.Contains(t, err.Error(), `tool "deep"`)
		assert.Contains(t, err.Error(), fmt.Sprintf("more than %d steps", ValidationSteps+2*ValidationStepsPerValue))
	})
	t.Run("ordinary schemas are not affected", func(t *testing.T) {
		// A recursive schema (a tree) and many values: a few steps each.
		tree := MustTool("tree", "Takes a tree.", map[string]any{
			"type": "object",
			"$defs": map[string]any{"node": map[string]any{
				"type":       "object",
				"properties": map[string]any{"name": map[string]any{"type": "string"}, "kids": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/node"}}},
				"required":   []any{"name"},
			}},
			"properties": map[string]any{"root": map[string]any{"$ref": "#/$defs/node"}},
		})
		kids := make([]any, 2000)
		for i := range kids {
			kids[i] = map[string]any{"name": fmt.Sprint(i), "kids": []any{map[string]any{"name": "leaf"}}}
		}
		require.NoError(t, tree.ValidateArguments(map[string]any{"root": map[string]any{"name": "r", "kids": kids}}))
		err := tree.ValidateArguments(map[string]any{"root": map[string]any{"kids": []any{}}})
		require.ErrorIs(t, err, ErrInvalidArguments)
		assert.NotErrorIs(t, err, ErrSchemaTooComplex)
	})
}

// TestSchemaNodes: the measure mcp.Connect bounds a server's schemas with.
func TestSchemaNodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]any
		want   int
	}{
		{"empty object", nil, 1},
		{"two properties", map[string]any{"type": "object", "properties": map[string]any{
			"a": map[string]any{"type": "string"}, "b": map[string]any{"type": "integer"}}}, 3},
		// d0 counts 1, dN = 1 + 2×(a reference + d(N-1)) = 2^(N+2) - 3;
		// the root and x (a reference to dN) add 2.
		{"doubling, depth 1", doublingSchema(1), 1<<3 - 1},
		{"doubling, depth 2", doublingSchema(2), 1<<4 - 1},
		{"doubling, depth 20", doublingSchema(20), 1<<22 - 1},
		{"doubling, depth 60: saturated", doublingSchema(60), 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := MustTool("t", "A tool.", tc.params).SchemaNodes()
			require.NoError(t, err)
			assert.Equal(t, tc.want, n)
		})
	}

	err := MustTool("deep", "A tool.", doublingSchema(20)).CheckSchemaNodes(DefaultMaxSchemaNodes)
	require.ErrorIs(t, err, ErrSchemaTooComplex)
	require.ErrorIs(t, err, ErrInvalidTool)
	assert.Contains(t, err.Error(), `"deep"`)
	assert.Contains(t, err.Error(), fmt.Sprint(DefaultMaxSchemaNodes))
	require.NoError(t, MustTool("small", "A tool.", doublingSchema(4)).CheckSchemaNodes(DefaultMaxSchemaNodes))
}

// TestMeteredValidationConcurrent: the metered copies of a schema serve
// one validation each at a time; concurrent calls each get their own
// steps and the same answers as alone.
func TestMeteredValidationConcurrent(t *testing.T) {
	tool := MustTool("either", "Takes a or b.", map[string]any{
		"type": "object",
		"properties": map[string]any{"v": map[string]any{"oneOf": []any{
			map[string]any{"type": "string", "maxLength": 3},
			map[string]any{"type": "integer"},
		}}},
	})
	deep := MustTool("deep", "Hostile.", doublingSchema(24))
	done := make(chan error, 16)
	for g := range 16 {
		go func() {
			var err error
			for i := range 40 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				good := tool.ValidateArgumentsContext(ctx, map[string]any{"v": "abc"})
				bad := tool.ValidateArgumentsContext(ctx, map[string]any{"v": "abcd"})
				cancel()
				switch {
				case good != nil:
					err = fmt.Errorf("goroutine %d, round %d: valid arguments refused: %w", g, i, good)
				case bad == nil || errors.Is(bad, ErrSchemaTooComplex):
					err = fmt.Errorf("goroutine %d, round %d: want a violation, got %v", g, i, bad)
				}
				if g == 0 && i == 0 {
					if e := deep.ValidateArguments(map[string]any{"x": 1.0}); !errors.Is(e, ErrSchemaTooComplex) {
						err = fmt.Errorf("the hostile schema: %v", e)
					}
				}
			}
			done <- err
		}()
	}
	for range 16 {
		require.NoError(t, <-done)
	}
}
