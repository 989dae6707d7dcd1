package genkitadapter_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	genkitadapter "github.com/llmtoolkit/llmtoolkit/adapters/genkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// The model receives each of the 12 code tools with its name, description
// and a schema whose JSON is byte-identical to llmtoolkit's.
func TestToolsSchemaRoundTripThroughGenerate(t *testing.T) {
	ct, err := codetools.New(t.TempDir())
	require.NoError(t, err)
	defer ct.Close()
	defs := ct.Tools()
	require.Len(t, defs, 12)

	s := &scripted{script: []func(*ai.ModelRequest) *ai.Message{
		func(*ai.ModelRequest) *ai.Message { return ai.NewModelTextMessage("ok") },
	}}
	g, m := newGenkit(t, s)
	_, err = genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("hi"),
		ai.WithTools(genkitadapter.ToolRefs(ct)...))
	require.NoError(t, err)
	require.Len(t, s.requests, 1)
	sent := map[string]*ai.ToolDefinition{}
	for _, td := range s.requests[0].Tools {
		sent[td.Name] = td
	}
	require.Len(t, sent, 12)
	for _, def := range defs {
		td, ok := sent[def.Name]
		require.True(t, ok, def.Name)
		assert.Equal(t, def.Description, td.Description, def.Name)
		want, err := json.Marshal(def.Parameters)
		require.NoError(t, err)
		got, err := json.Marshal(td.InputSchema)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), def.Name)
	}
	for _, tool := range genkitadapter.Tools(ct) {
		def, ok := llmtoolkit.FindTool(ct, tool.Name())
		require.True(t, ok)
		want, _ := json.Marshal(def.Parameters)
		got, _ := json.Marshal(tool.Definition().InputSchema)
		assert.Equal(t, string(want), string(got), tool.Name())
	}
}

// What the adapter fixes: a genkit tool with the same schema whose input
// fails genkit's validation ends Generate.
func TestGenkitOwnToolEndsGenerateOnInvalidInput(t *testing.T) {
	s := &scripted{script: []func(*ai.ModelRequest) *ai.Message{
		callTools(&ai.ToolRequest{Name: "echo", Ref: "1", Input: map[string]any{}}),
		echoToolOutputs,
	}}
	g, m := newGenkit(t, s)
	echo := ai.NewTool("echo", "Echoes text.", func(_ *ai.ToolContext, in any) (any, error) { return in, nil },
		ai.WithInputSchema(objectSchema("text")))
	_, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("hi"), ai.WithTools(echo))
	require.Error(t, err)
}

// Every kind of failed call reaches the model as {"error": ...} and the
// generation goes on to the model's next turn.
func TestErrorResultsReachTheModel(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644))
	ct, err := codetools.New(dir)
	require.NoError(t, err)
	defer ct.Close()
	boom := &stub{
		tools: []llmtoolkit.Tool{llmtoolkit.MustTool("boom", "Panics.", objectSchema("text"))},
		run: map[string]func(context.Context, llmtoolkit.Call) (string, error){
			"boom": func(context.Context, llmtoolkit.Call) (string, error) { panic("kaboom") },
		},
	}
	r := llmtoolkit.Compose(ct, boom)

	tests := []struct {
		name  string
		req   *ai.ToolRequest
		error string // a part of the error the model reads
	}{
		{"missing argument", &ai.ToolRequest{Name: "read_file", Input: map[string]any{}}, "path"},
		{"wrong type", &ai.ToolRequest{Name: "read_file", Input: map[string]any{"path": 3}}, "path"},
		{"null argument", &ai.ToolRequest{Name: "read_file", Input: map[string]any{"path": nil}}, "path"},
		{"outside the root", &ai.ToolRequest{Name: "read_file", Input: map[string]any{"path": "../../etc/passwd"}}, "outside"},
		{"not an object", &ai.ToolRequest{Name: "read_file", Input: "a.txt"}, "JSON object"},
		{"tool failure", &ai.ToolRequest{Name: "edit_file", Input: map[string]any{"path": "a.txt", "oldText": "zeta", "newText": "eta"}}, "could not find"},
		{"panic", &ai.ToolRequest{Name: "boom", Input: map[string]any{"text": "x"}}, "kaboom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &scripted{script: []func(*ai.ModelRequest) *ai.Message{callTools(tc.req), echoToolOutputs}}
			g, m := newGenkit(t, s)
			resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("go"),
				ai.WithTools(genkitadapter.ToolRefs(r)...))
			require.NoError(t, err)
			outs := toolOutputs(t, resp.Text())
			require.Len(t, outs, 1)
			obj, ok := outs[0].(map[string]any)
			require.True(t, ok, "output %#v is not {\"error\": ...}", outs[0])
			msg, _ := obj["error"].(string)
			assert.Contains(t, msg, tc.error)
		})
	}
}

// A successful call's output is the content; the Display goes to WithOnResult
// only, never into the conversation.
func TestOutputAndDisplay(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644))
	ct, err := codetools.New(dir)
	require.NoError(t, err)
	defer ct.Close()

	var mu sync.Mutex
	var results []llmtoolkit.Result
	onResult := genkitadapter.WithOnResult(func(_ context.Context, res llmtoolkit.Result) {
		mu.Lock()
		defer mu.Unlock()
		results = append(results, res)
	})
	s := &scripted{script: []func(*ai.ModelRequest) *ai.Message{
		callTools(&ai.ToolRequest{Name: "edit_file", Input: map[string]any{"path": "a.txt", "oldText": "alpha", "newText": "beta"}}),
		echoToolOutputs,
	}}
	g, m := newGenkit(t, s)
	resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("go"),
		ai.WithTools(genkitadapter.ToolRefs(ct, onResult)...))
	require.NoError(t, err)
	outs := toolOutputs(t, resp.Text())
	require.Len(t, outs, 1)
	text, ok := outs[0].(string)
	require.True(t, ok)
	assert.Contains(t, text, "Successfully replaced text in a.txt")
	assert.NotContains(t, resp.Text(), "firstChangedLine")

	require.Len(t, results, 1)
	require.NotNil(t, results[0].Display)
	assert.Equal(t, "diff", results[0].Display.Kind)
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "beta\n", string(got))
}

// A panicking WithOnResult does not fail the call.
func TestOnResultPanicIsRescued(t *testing.T) {
	r := &stub{
		tools: []llmtoolkit.Tool{llmtoolkit.MustTool("echo", "Echoes.", objectSchema("text"))},
		run: map[string]func(context.Context, llmtoolkit.Call) (string, error){
			"echo": func(_ context.Context, c llmtoolkit.Call) (string, error) { return c.Arguments["text"].(string), nil },
		},
	}
	tools := genkitadapter.Tools(r, genkitadapter.WithOnResult(func(context.Context, llmtoolkit.Result) { panic("host bug") }))
	out, err := tools[0].RunRaw(context.Background(), map[string]any{"text": "hi"})
	require.NoError(t, err)
	assert.Equal(t, "hi", out)
}

// The session bound on Generate's context reaches the tools, and CountTurns
// numbers the model's turns: the calls of one answer share iteration and
// turn.
func TestSessionAndTurnsTravel(t *testing.T) {
	type seen struct {
		session   map[string]any
		iteration int
		turn      llmtoolkit.Turn
	}
	var mu sync.Mutex
	calls := map[string]seen{}
	r := &stub{
		tools: []llmtoolkit.Tool{llmtoolkit.MustTool("note", "Notes.", objectSchema("id"))},
		run: map[string]func(context.Context, llmtoolkit.Call) (string, error){
			"note": func(ctx context.Context, c llmtoolkit.Call) (string, error) {
				n := llmtoolkit.ScopeFrom(ctx).Iteration
				turn := llmtoolkit.ScopeFrom(ctx).Turn
				mu.Lock()
				defer mu.Unlock()
				calls[c.Arguments["id"].(string)] = seen{llmtoolkit.ScopeFrom(ctx).Session, n, turn}
				return "noted", nil
			},
		},
	}
	s := &scripted{script: []func(*ai.ModelRequest) *ai.Message{
		callTools(&ai.ToolRequest{Name: "note", Ref: "a", Input: map[string]any{"id": "a"}},
			&ai.ToolRequest{Name: "note", Ref: "b", Input: map[string]any{"id": "b"}}),
		callTools(&ai.ToolRequest{Name: "note", Ref: "c", Input: map[string]any{"id": "c"}}),
		echoToolOutputs,
	}}
	g, m := newGenkit(t, s)
	ctx := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"user": "ada"} })
	ctx, turns := genkitadapter.CountTurns(ctx)
	_, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("go"), ai.WithMiddleware(turns),
		ai.WithTools(genkitadapter.ToolRefs(r)...))
	require.NoError(t, err)
	require.Len(t, calls, 3)
	for _, id := range []string{"a", "b", "c"} {
		assert.Equal(t, map[string]any{"user": "ada"}, calls[id].session, id)
	}
	assert.Equal(t, 1, calls["a"].iteration)
	assert.Equal(t, 1, calls["b"].iteration)
	assert.Equal(t, 2, calls["c"].iteration)
	assert.Equal(t, calls["a"].turn, calls["b"].turn)
	assert.NotEqual(t, calls["a"].turn, calls["c"].turn)
}

// The tool list is read at each Tools call: a resolver whose list changed
// (the plan mode's switch) offers its new list to the next Generate.
func TestToolListIsReadAgainPerGenerate(t *testing.T) {
	answer := func(context.Context, llmtoolkit.Call) (string, error) { return "ok", nil }
	r := &stub{
		tools: []llmtoolkit.Tool{llmtoolkit.MustTool("plan", "Plans.", objectSchema("text"))},
		run:   map[string]func(context.Context, llmtoolkit.Call) (string, error){"plan": answer, "write": answer},
	}
	offered := func() []string {
		s := &scripted{script: []func(*ai.ModelRequest) *ai.Message{
			func(*ai.ModelRequest) *ai.Message { return ai.NewModelTextMessage("ok") },
		}}
		g, m := newGenkit(t, s)
		_, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("hi"),
			ai.WithTools(genkitadapter.ToolRefs(r)...))
		require.NoError(t, err)
		var names []string
		for _, td := range s.requests[0].Tools {
			names = append(names, td.Name)
		}
		return names
	}
	assert.Equal(t, []string{"plan"}, offered())
	r.tools = append(r.tools, llmtoolkit.MustTool("write", "Writes.", objectSchema("text")))
	assert.ElementsMatch(t, []string{"plan", "write"}, offered())
}

// Editing the schema genkit holds (as a plugin converting it may) leaves
// llmtoolkit's definition alone.
func TestDefinitionIsACopy(t *testing.T) {
	ct, err := codetools.New(t.TempDir())
	require.NoError(t, err)
	defer ct.Close()
	def, ok := llmtoolkit.FindTool(ct, "read_file")
	require.True(t, ok)
	before, _ := json.Marshal(def.Parameters)
	for _, tool := range genkitadapter.Tools(ct) {
		schema := tool.Definition().InputSchema
		schema["additionalProperties"] = false
		if props, ok := schema["properties"].(map[string]any); ok {
			for k := range props {
				props[k] = "edited"
			}
		}
	}
	after, _ := json.Marshal(def.Parameters)
	assert.Equal(t, string(before), string(after))
	assert.Nil(t, genkitadapter.Tools(nil))
}

// Tools registered once on the genkit instance and named in Generate run
// the same way: an error result goes on to the next turn.
func TestRegisteredToolsByName(t *testing.T) {
	ct, err := codetools.New(t.TempDir())
	require.NoError(t, err)
	defer ct.Close()
	s := &scripted{script: []func(*ai.ModelRequest) *ai.Message{
		callTools(&ai.ToolRequest{Name: "read_file", Input: map[string]any{"path": "missing.txt"}}),
		echoToolOutputs,
	}}
	g, m := newGenkit(t, s)
	for _, tool := range genkitadapter.Tools(ct) {
		genkit.RegisterAction(g, tool)
	}
	found := genkit.LookupTool(g, "read_file")
	require.NotNil(t, found)
	want, _ := json.Marshal(mustFind(t, ct, "read_file").Parameters)
	got, _ := json.Marshal(found.Definition().InputSchema)
	assert.Equal(t, string(want), string(got))

	resp, err := genkit.Generate(context.Background(), g, ai.WithModel(m), ai.WithPrompt("go"),
		ai.WithTools(ai.ToolName("read_file")))
	require.NoError(t, err)
	outs := toolOutputs(t, resp.Text())
	require.Len(t, outs, 1)
	assert.Contains(t, outs[0], "error")
}

func mustFind(t *testing.T, r llmtoolkit.Resolver, name string) llmtoolkit.Tool {
	t.Helper()
	def, ok := llmtoolkit.FindTool(r, name)
	require.True(t, ok, name)
	return def
}
