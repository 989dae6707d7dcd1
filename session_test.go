package llmtoolkit

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sessionResolver() *stubResolver {
	whoami := func(ctx context.Context, _ Call) (string, error) {
		return fmt.Sprint(ScopeFrom(ctx).Session["user"]), nil
	}
	ro := MustTool("read", "Reads.", nil)
	ro.Annotations = &Annotations{ReadOnly: true}
	return newStub(map[string]func(context.Context, Call) (string, error){
		"whoami": whoami, "read": answer("data"), "write": answer("written"), "secret": answer("hidden"),
	}, simpleTool("whoami"), ro, simpleTool("write"), simpleTool("secret"))
}

func TestPrepareSession(t *testing.T) {
	r := sessionResolver()
	tools, fn := PrepareSession(r, []string{"write", "missing", "whoami", "write"}, map[string]any{"user": "ada"})
	require.NotNil(t, fn)
	assert.Equal(t, []string{"write", "whoami"}, toolNamesOf(tools), "declared order, only what r has, no duplicates")
	assert.Equal(t, tools, fn.Tools(), "the session lists its tools")

	out, err := fn.Resolve(context.Background(), Call{Name: "whoami"})
	require.NoError(t, err)
	assert.Equal(t, "ada", out, "the session is bound in ctx")

	for _, name := range []string{"secret", "missing"} {
		_, err = fn.Resolve(context.Background(), Call{Name: name})
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrUnknownTool)
		assert.Contains(t, err.Error(), "is not available in this session")
	}
	res := Execute(context.Background(), fn, Call{Name: "secret"})
	assert.True(t, res.IsError)
	assert.Equal(t, `unknown tool: "secret". Available tools: write, whoami`, res.Content)

	for _, declared := range [][]string{nil, {}, {"nope"}} {
		tools, fn := PrepareSession(r, declared, nil)
		assert.Nil(t, tools)
		require.NotNil(t, fn, "the session is never nil")
		assert.Empty(t, fn.Tools())
		res := Execute(context.Background(), fn, Call{Name: "whoami"})
		assert.ErrorIs(t, res.Err, ErrUnknownTool)
		assert.Contains(t, res.Content, "no tools are")
	}
}

func TestPrepareSessionConcurrentTurns(t *testing.T) {
	r := sessionResolver()
	var wg sync.WaitGroup
	for i := range 1000 {
		wg.Go(func() {
			user := fmt.Sprintf("user-%d", i)
			_, fn := PrepareSession(r, []string{"whoami"}, map[string]any{"user": user})
			for range 3 {
				res := Execute(context.Background(), fn, Call{Name: "whoami"})
				if !assert.Equal(t, user, res.Content) {
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestFilterAndReadOnly(t *testing.T) {
	r := sessionResolver()
	ro := ReadOnly(r)
	assert.Equal(t, []string{"read"}, toolNamesOf(ro.Tools()))
	out, err := ro.Resolve(context.Background(), Call{Name: "read"})
	require.NoError(t, err)
	assert.Equal(t, "data", out)
	_, err = ro.Resolve(context.Background(), Call{Name: "write"})
	assert.ErrorIs(t, err, ErrUnknownTool, "filtered tools are not callable")

	f := Filter(r, func(t Tool) bool { return t.Name != "secret" })
	assert.Equal(t, []string{"whoami", "read", "write"}, toolNamesOf(f.Tools()))
	res := Execute(context.Background(), f, Call{Name: "secret"})
	assert.Equal(t, `unknown tool: "secret". Available tools: whoami, read, write`, res.Content)

	withRecipe := withRecipes(r, map[string]Recipe{
		"read":   func(map[string]any) Plan { return Plan{Serial: []Call{{Name: "write"}}} },
		"secret": func(map[string]any) Plan { return Plan{} },
	})
	fr := Filter(withRecipe, func(t Tool) bool { return t.Name == "read" })
	read, ok := fr.(ToolLookup).LookupTool("read")
	require.True(t, ok)
	assert.NotNil(t, read.Recipe, "a kept definition keeps its recipe")
	res = Execute(context.Background(), fr, Call{Name: "read"})
	assert.ErrorIs(t, res.Err, ErrUnknownTool, "a recipe's steps pass through the filter like any call")
	assert.Contains(t, res.Content, "step 1 (write) failed")
}

// sessionSeer notes the session map of each call it is told of.
type sessionSeer struct {
	mu   sync.Mutex
	seen []string
}

func (o *sessionSeer) ObserveCall(ctx context.Context, ob Observation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, fmt.Sprintf("%s %s user=%v", ob.Kind, ob.Call.Name, ScopeFrom(ctx).Session["user"]))
}

// TestSessionObserversSeeTheSession: calls Execute answers itself through a
// Session (refused, recipe parents, refused undeclared steps) reach the
// definitions' observers with the session bound, as resolved calls reach the
// resolver, whatever wraps the Session.
func TestSessionObserversSeeTheSession(t *testing.T) {
	ob := &sessionSeer{}
	r := observed(ob)
	bad := simpleTool("bad")
	bad.Recipe = func(map[string]any) Plan {
		return Plan{Serial: []Call{{Name: "count", Arguments: map[string]any{"n": 11.0}}}}
	}
	bad.Observers = []Observer{ob}
	r.tools = append(r.tools, bad)
	_, s := PrepareSession(r, []string{"count", "both", "bad"}, map[string]any{"user": "ada"})
	wrapped := Compose(Filter(s, func(Tool) bool { return true }))
	ctx := WithScope(context.Background(), func(sc *Scope) { sc.Session = map[string]any{"user": "outer"} })
	assert.True(t, Execute(ctx, wrapped, Call{Name: "count", Arguments: map[string]any{"n": 11.0}}).IsError)
	res := Execute(ctx, wrapped, Call{Name: "both", Arguments: map[string]any{"n": 1.0}})
	assert.False(t, res.IsError, res.Content)
	assert.True(t, Execute(ctx, wrapped, Call{Name: "bad"}).IsError)
	assert.Equal(t, []string{"refused count user=ada", "recipe both user=ada", "refused count user=ada", "recipe bad user=ada"}, ob.seen)
	assert.Len(t, r.tools[0].Observers, 1)
	assert.Equal(t, ob, r.tools[0].Observers[0], "the wrapped resolver's definitions are not changed")
}

// TestFilterAroundSessionRunsDeclaredRecipes: a Filter (or ReadOnly) over a
// Session lets the undeclared steps of a kept recipe through to the
// Session, which validates them; a name the filter refused stays refused,
// even as a step, and an unlisted name is refused outside a kept recipe.
func TestFilterAroundSessionRunsDeclaredRecipes(t *testing.T) {
	ob := &recordingObserver{}
	r := observed(ob)
	_, s := PrepareSession(r, []string{"both"}, map[string]any{"user": "ada"})
	all := func(Tool) bool { return true }
	for name, f := range map[string]Resolver{
		"filter":                Filter(s, all),
		"nested":                Compose(Filter(Compose(Filter(s, all)), all)),
		"filter of other names": Filter(s, func(t Tool) bool { return t.Name != "count" }),
	} {
		t.Run(name, func(t *testing.T) {
			res := Execute(context.Background(), f, Call{Name: "both", Arguments: map[string]any{"n": 2.0}})
			require.False(t, res.IsError, res.Content)
			assert.Equal(t, "counted\n\nechoed", res.Content)
			res = Execute(context.Background(), f, Call{Name: "both", Arguments: map[string]any{"n": 20.0}})
			assert.ErrorIs(t, res.Err, ErrInvalidArguments, "the Session validates the undeclared step")
			res = Execute(context.Background(), f, Call{Name: "echo"})
			assert.ErrorIs(t, res.Err, ErrUnknownTool, "a step is not callable on its own")
		})
	}
	// A filter over the raw resolver refuses what keep refused, even as a
	// step of a kept recipe.
	f := Filter(r, func(t Tool) bool { return t.Name != "echo" })
	res := Execute(context.Background(), f, Call{Name: "both", Arguments: map[string]any{"n": 2.0}})
	assert.ErrorIs(t, res.Err, ErrUnknownTool)
	assert.Contains(t, res.Content, "step 2 (echo) failed")
	_, err := f.Resolve(withRecipeRun(context.Background(), RecipeRun{Tool: "count"}), Call{Name: "unlisted"})
	assert.ErrorIs(t, err, ErrUnknownTool, "only the steps of a kept recipe pass")
}

// TestSessionTellsStepDefinitions: a Session admitting an undeclared step
// of a declared recipe tells the step's definition to every sink bound
// above it, so a wrapper that could not find it (it is not listed) learns
// its per-tool facts.
func TestSessionTellsStepDefinitions(t *testing.T) {
	r := observed(&recordingObserver{})
	r.tools[1].SensitiveFields = []string{"text"} // echo
	_, s := PrepareSession(r, []string{"both", "count"}, nil)
	var outer, inner []string
	tell := func(into *[]string) Resolver {
		return &sinkBinder{r: s, into: into}
	}
	res := Execute(context.Background(), tell(&outer), Call{Name: "both", Arguments: map[string]any{"n": 1.0}})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, []string{"echo [text]"}, outer, "the undeclared step, with its facts")

	outer = nil
	res = Execute(context.Background(), &sinkBinder{r: tell(&inner), into: &outer}, Call{Name: "both", Arguments: map[string]any{"n": 1.0}})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, outer, inner, "sinks bound by several wrappers are all told")
	assert.Len(t, outer, 1)

	outer = nil
	_, err := (&sinkBinder{r: s, into: &outer}).Resolve(context.Background(), Call{Name: "count"})
	require.NoError(t, err)
	assert.Empty(t, outer, "a declared tool is listed: nothing to tell")
}

// sinkBinder resolves through r with a sink noting what it is told.
type sinkBinder struct {
	r    Resolver
	into *[]string
}

func (b *sinkBinder) Tools() []Tool { return b.r.Tools() }
func (b *sinkBinder) Resolve(ctx context.Context, call Call) (string, error) {
	ctx = WithListeners(ctx, Listeners{Definition: func(t Tool) {
		s := t.Name
		if len(t.SensitiveFields) > 0 {
			s += fmt.Sprint(" ", t.SensitiveFields)
		}
		*b.into = append(*b.into, s)
	}})
	return b.r.Resolve(ctx, call)
}

// TestDefinitionSinksChain: every sink bound is told, and a nil one leaves
// the chain as it was.
func TestDefinitionSinksChain(t *testing.T) {
	var told []string
	ctx := WithListeners(context.Background(), Listeners{Definition: func(t Tool) { told = append(told, "outer "+t.Name) }})
	ctx = WithListeners(ctx, Listeners{}) // no listener: the chain as it was
	ctx = WithListeners(ctx, Listeners{Definition: func(t Tool) { told = append(told, "inner "+t.Name) }})
	require.NotPanics(t, func() { TellDefinition(ctx, Tool{Name: "x"}) })
	assert.Equal(t, []string{"inner x", "outer x"}, told)
}
