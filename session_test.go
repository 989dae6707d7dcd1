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
		return fmt.Sprint(SessionFrom(ctx)["user"]), nil
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
	o.seen = append(o.seen, fmt.Sprintf("%s %s user=%v", ob.Kind, ob.Call.Name, SessionFrom(ctx)["user"]))
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
	wrapped := Compose(Compose(s))
	ctx := WithSession(context.Background(), map[string]any{"user": "outer"})
	assert.True(t, Execute(ctx, wrapped, Call{Name: "count", Arguments: map[string]any{"n": 11.0}}).IsError)
	res := Execute(ctx, wrapped, Call{Name: "both", Arguments: map[string]any{"n": 1.0}})
	assert.False(t, res.IsError, res.Content)
	assert.True(t, Execute(ctx, wrapped, Call{Name: "bad"}).IsError)
	assert.Equal(t, []string{"refused count user=ada", "recipe both user=ada", "refused count user=ada", "recipe bad user=ada"}, ob.seen)
	assert.Len(t, r.tools[0].Observers, 1)
	assert.Equal(t, ob, r.tools[0].Observers[0], "the wrapped resolver's definitions are not changed")
}
