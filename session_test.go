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
