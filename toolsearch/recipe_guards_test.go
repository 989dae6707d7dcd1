package toolsearch_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestRecipeStepsSeenByEveryGuardOnBothPaths: an agent guard around
// toolsearch.New(..., WithProxy()) with a deny rule on danger_deploy
// denied call_tool {"name":"danger_deploy"} given to Execute, but given to
// the guarded resolver's Resolve the guard checked only call_tool and the
// denied tool ran below it. The same held for a Filter that drops the
// tool and for a trace Recorder (no row for the step). Every guard now
// sees the step on both paths (llmtoolkit.ResolveRecipe).
func TestRecipeStepsSeenByEveryGuardOnBothPaths(t *testing.T) {
	guards := []struct {
		name string
		// wrap puts the guard around r; check says what it must have seen.
		wrap func(t *testing.T, r llmtoolkit.Resolver) (llmtoolkit.Resolver, func(t *testing.T, ran bool, err error))
	}{
		{"agent deny rule", func(t *testing.T, r llmtoolkit.Resolver) (llmtoolkit.Resolver, func(*testing.T, bool, error)) {
			p, err := agent.New(agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "danger_deploy"}}})
			require.NoError(t, err)
			return p.Guard(r), func(t *testing.T, ran bool, err error) {
				assert.False(t, ran, "the denied step must not run")
				assert.ErrorIs(t, err, llmtoolkit.ErrDenied)
			}
		}},
		{"Filter", func(t *testing.T, r llmtoolkit.Resolver) (llmtoolkit.Resolver, func(*testing.T, bool, error)) {
			return llmtoolkit.Filter(r, func(tl llmtoolkit.Tool) bool { return tl.Name != "danger_deploy" }),
				func(t *testing.T, ran bool, err error) {
					assert.False(t, ran, "the filtered-out step must not run")
					assert.ErrorIs(t, err, llmtoolkit.ErrUnknownTool)
				}
		}},
		{"trace Recorder", func(t *testing.T, r llmtoolkit.Resolver) (llmtoolkit.Resolver, func(*testing.T, bool, error)) {
			db := openDB(t)
			rec := trace.Record(r, db, trace.WithDefaultConversation(tenant, conv), trace.WithStrict())
			return rec, func(t *testing.T, ran bool, err error) {
				require.NoError(t, err)
				assert.True(t, ran)
				rows, lerr := trace.List(context.Background(), db, trace.Filter{ToolName: "danger_deploy"})
				require.NoError(t, lerr)
				require.Len(t, rows, 1, "the step has its row")
				assert.NotNil(t, rows[0].ParentID, "under the recipe's row")
			}
		}},
	}
	paths := []struct {
		name string
		call func(ctx context.Context, r llmtoolkit.Resolver, c llmtoolkit.Call) error
	}{
		{"Execute", func(ctx context.Context, r llmtoolkit.Resolver, c llmtoolkit.Call) error {
			return llmtoolkit.Execute(ctx, r, c).Err
		}},
		{"Resolve", func(ctx context.Context, r llmtoolkit.Resolver, c llmtoolkit.Call) error {
			_, err := r.Resolve(ctx, c)
			return err
		}},
	}
	for _, g := range guards {
		for _, path := range paths {
			t.Run(g.name+"/"+path.name, func(t *testing.T) {
				var ran atomic.Bool
				fake := lt.NewFake(nil)
				fake.Add(llmtoolkit.MustTool("danger_deploy", "Deploys to production.", obj(map[string]any{"env": str}, "env")),
					func(context.Context, llmtoolkit.Call) (string, error) { ran.Store(true); return "deployed", nil })
				fake.Add(llmtoolkit.MustTool("read_file", "Reads a file.", obj(map[string]any{"path": str}, "path")),
					func(context.Context, llmtoolkit.Call) (string, error) { return "text", nil })
				guarded, check := g.wrap(t, toolsearch.New(fake, toolsearch.WithProxy(), toolsearch.WithUndiscoveredCalls()))
				err := path.call(context.Background(), guarded, llmtoolkit.Call{ID: "c1", Name: toolsearch.CallToolName,
					Arguments: map[string]any{"name": "danger_deploy", "arguments": map[string]any{"env": "prod"}}})
				check(t, ran.Load(), err)
			})
		}
	}
}
