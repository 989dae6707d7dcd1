package llmtoolkit

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecipeGates: Execute asks a recipe tool's gates before its plan runs,
// whatever wraps the definition; a refusal (error or panic) stops the plan
// and is told to the observers; changed arguments are validated again and
// reach the plan; a Session asks them with its session bound.
func TestRecipeGates(t *testing.T) {
	count := MustTool("count", "Counts.", map[string]any{"type": "object", "properties": map[string]any{
		"n": map[string]any{"type": "integer", "maximum": 10}}})
	plan := MustTool("plan", "Counts twice.", count.Parameters)
	plan.Recipe = func(args map[string]any) Plan {
		return Plan{Serial: []Call{{Name: "count", Arguments: args}}}
	}
	var ran []any
	fns := map[string]func(context.Context, Call) (string, error){
		"count": func(_ context.Context, call Call) (string, error) {
			ran = append(ran, call.Arguments["n"])
			return "counted", nil
		},
	}
	call := Call{ID: "1", Name: "plan", Arguments: map[string]any{"n": 1}}
	for _, tc := range []struct {
		name     string
		gate     Gate
		wrap     func(Resolver) Resolver
		wantErr  error // nil: the plan ran
		wantIn   string
		wantRan  []any
		wantSeen string // the session value the gate saw
	}{
		{name: "a refusal stops the plan", gate: func(context.Context, Call) (Call, error) {
			return Call{}, Deny("plan", "not today")
		}, wantErr: ErrDenied, wantIn: "not today"},
		{name: "through Compose and Filter", gate: func(context.Context, Call) (Call, error) {
			return Call{}, Deny("plan", "not today")
		}, wrap: func(r Resolver) Resolver {
			return Filter(Compose(r), func(Tool) bool { return true })
		}, wantErr: ErrDenied, wantIn: "not today"},
		{name: "a panic refuses the call", gate: func(context.Context, Call) (Call, error) {
			panic("gate bug")
		}, wantErr: ErrToolPanic, wantIn: "gate bug"},
		{name: "changed arguments are validated", gate: func(_ context.Context, c Call) (Call, error) {
			c.Arguments = map[string]any{"n": 11}
			return c, nil
		}, wantErr: ErrInvalidArguments},
		{name: "changed arguments reach the plan", gate: func(_ context.Context, c Call) (Call, error) {
			c.Arguments = map[string]any{"n": 2}
			return c, nil
		}, wantRan: []any{2}},
		{name: "a Session binds its session", gate: func(ctx context.Context, c Call) (Call, error) {
			if ScopeFrom(ctx).Session["user"] != "ada" {
				return c, errors.New("no session")
			}
			return c, nil
		}, wrap: func(r Resolver) Resolver {
			_, s := PrepareSession(r, []string{"plan"}, map[string]any{"user": "ada"})
			return s
		}, wantRan: []any{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran = nil
			ob := &recordingObserver{}
			p := plan
			p.Gates = []Gate{nil, tc.gate}
			p.Observers = []Observer{ob}
			var r Resolver = newStub(fns, count, p)
			if tc.wrap != nil {
				r = tc.wrap(r)
			}
			res := Execute(context.Background(), r, call)
			if tc.wantErr == nil {
				require.False(t, res.IsError, res.Content)
				assert.Equal(t, tc.wantRan, ran)
				require.Len(t, ob.all(), 1)
				assert.Equal(t, ObservedRecipe, ob.all()[0].Kind)
				return
			}
			require.True(t, res.IsError)
			assert.ErrorIs(t, res.Err, tc.wantErr)
			assert.Contains(t, res.Content, tc.wantIn)
			assert.Empty(t, ran, "no step ran")
			require.Len(t, ob.all(), 1)
			assert.Equal(t, ObservedRefused, ob.all()[0].Kind)
		})
	}
}
