package llmtoolkit

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingObserver keeps every observation it is told of.
type recordingObserver struct {
	mu  sync.Mutex
	obs []Observation
}

func (o *recordingObserver) ObserveCall(_ context.Context, ob Observation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.obs = append(o.obs, ob)
}

func (o *recordingObserver) all() []Observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Observation(nil), o.obs...)
}

// observed returns a stub whose every tool carries ob, plus a recipe tool
// "both" running "count" then "echo".
func observed(ob Observer) *stubResolver {
	count := MustTool("count", "Counts.", map[string]any{"type": "object", "properties": map[string]any{
		"n": map[string]any{"type": "integer", "maximum": 10}}})
	echo := simpleTool("echo")
	both := simpleTool("both")
	both.Recipe = func(args map[string]any) Plan {
		return Plan{Serial: []Call{{Name: "count", Arguments: args}, {Name: "echo"}}}
	}
	s := newStub(map[string]func(context.Context, Call) (string, error){
		"count": answer("counted"), "echo": answer("echoed"),
	}, count, echo, both)
	for i := range s.tools {
		s.tools[i].Observers = []Observer{ob}
	}
	return s
}

func TestExecuteTellsObserversOfRefusedCalls(t *testing.T) {
	tests := []struct {
		name    string
		args    map[string]any
		wantErr error
		want    string
	}{
		{"invalid", map[string]any{"n": 11.0}, ErrInvalidArguments, "/n: must be <= 10"},
		{"NaN", map[string]any{"n": math.NaN()}, ErrInvalidArguments, "/n: NaN is not a number JSON can hold"},
		{"bad json.Number", map[string]any{"n": json.Number("1x")}, ErrInvalidArguments, `"1x" is not a valid JSON number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ob := &recordingObserver{}
			r := observed(ob)
			var res Result
			require.NotPanics(t, func() {
				res = Execute(context.Background(), Compose(r), Call{ID: "c1", Name: "count", Arguments: tc.args})
			})
			assert.True(t, res.IsError)
			assert.ErrorIs(t, res.Err, tc.wantErr)
			assert.Contains(t, res.Content, tc.want)
			assert.Zero(t, r.calls.Load(), "the tool did not run")
			obs := ob.all()
			require.Len(t, obs, 1)
			assert.Equal(t, ObservedRefused, obs[0].Kind)
			assert.Equal(t, "c1", obs[0].Call.ID)
			assert.Equal(t, res, obs[0].Result)
		})
	}
	t.Run("context done", func(t *testing.T) {
		ob := &recordingObserver{}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res := Execute(ctx, observed(ob), Call{Name: "echo"})
		assert.ErrorIs(t, res.Err, context.Canceled)
		require.Len(t, ob.all(), 1)
		assert.Equal(t, ObservedRefused, ob.all()[0].Kind)
	})
	t.Run("resolved calls are not observed", func(t *testing.T) {
		ob := &recordingObserver{}
		res := Execute(context.Background(), observed(ob), Call{Name: "echo"})
		assert.Equal(t, "echoed", res.Content)
		assert.Empty(t, ob.all(), "a resolved call is seen by the resolvers it goes through")
	})
}

func TestExecuteTellsObserversOfRecipeCalls(t *testing.T) {
	ob := &recordingObserver{}
	var runs []RecipeRun
	var mu sync.Mutex
	r := observed(ob)
	r.fns["count"] = func(ctx context.Context, _ Call) (string, error) {
		run, ok := RecipeRunFrom(ctx)
		require.True(t, ok, "a step knows its recipe run")
		mu.Lock()
		runs = append(runs, run)
		mu.Unlock()
		return "counted", nil
	}
	res := Execute(context.Background(), r, Call{ID: "p", Name: "both", Arguments: map[string]any{"n": 3.0}})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "counted\n\nechoed", res.Content)
	obs := ob.all()
	require.Len(t, obs, 1)
	assert.Equal(t, ObservedRecipe, obs[0].Kind)
	require.Len(t, runs, 1)
	assert.Equal(t, RecipeRun{ID: obs[0].RunID, Tool: "both", CallID: "p"}, runs[0])
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, obs[0].RunID)

	// A step refused by validation is observed as refused, and fails the recipe.
	ob2 := &recordingObserver{}
	res = Execute(context.Background(), observed(ob2), Call{Name: "both", Arguments: map[string]any{"n": 50.0}})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "step 1 (count) failed")
	kinds := []ObservationKind{}
	for _, o := range ob2.all() {
		kinds = append(kinds, o.Kind)
	}
	assert.Equal(t, []ObservationKind{ObservedRefused, ObservedRecipe}, kinds)
}

type panickyObserver struct{}

func (panickyObserver) ObserveCall(context.Context, Observation) { panic("observer bug") }

func TestObserverPanicIsContained(t *testing.T) {
	r := observed(panickyObserver{})
	var res Result
	require.NotPanics(t, func() {
		res = Execute(context.Background(), r, Call{Name: "count", Arguments: map[string]any{"n": 99.0}})
	})
	assert.ErrorIs(t, res.Err, ErrInvalidArguments)
}

// panickyTools panics when asked for its tools.
type panickyTools struct{}

func (panickyTools) Tools() []Tool                                 { panic("tools bug") }
func (panickyTools) Resolve(context.Context, Call) (string, error) { return "ran", nil }

func TestExecuteRescuesAResolverListingPanic(t *testing.T) {
	var res Result
	require.NotPanics(t, func() { res = Execute(context.Background(), panickyTools{}, Call{Name: "x"}) })
	assert.ErrorIs(t, res.Err, ErrToolPanic)
	assert.Contains(t, res.Content, "tools bug")
}

func TestSessionRunsDeclaredRecipes(t *testing.T) {
	ob := &recordingObserver{}
	r := observed(ob)
	var sessions []any
	var mu sync.Mutex
	r.fns["echo"] = func(ctx context.Context, _ Call) (string, error) {
		mu.Lock()
		sessions = append(sessions, ScopeFrom(ctx).Session["user"])
		mu.Unlock()
		return "echoed", nil
	}
	tools, s := PrepareSession(Compose(r), []string{"both"}, map[string]any{"user": "ada"})
	assert.Equal(t, []string{"both"}, toolNamesOf(tools), "steps are not offered")

	res := Execute(context.Background(), s, Call{Name: "both", Arguments: map[string]any{"n": 2.0}})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "counted\n\nechoed", res.Content, "the plan ran, its undeclared steps included")
	assert.Equal(t, []any{"ada"}, sessions, "steps see the session")

	res = Execute(context.Background(), s, Call{Name: "both", Arguments: map[string]any{"n": 20.0}})
	assert.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, ErrInvalidArguments, "an undeclared step is validated against its own definition")
	assert.Contains(t, res.Content, "step 1 (count) failed")

	res = Execute(context.Background(), s, Call{Name: "echo"})
	assert.ErrorIs(t, res.Err, ErrUnknownTool, "a step's tool is not callable on its own")

	_, err := s.Resolve(withRecipeRun(context.Background(), RecipeRun{Tool: "echo"}), Call{Name: "count"})
	assert.ErrorIs(t, err, ErrUnknownTool, "only the steps of a declared recipe pass")

	var kinds []ObservationKind
	for _, o := range ob.all() {
		kinds = append(kinds, o.Kind)
	}
	assert.Equal(t, []ObservationKind{ObservedRecipe, ObservedRefused, ObservedRecipe}, kinds)
}
