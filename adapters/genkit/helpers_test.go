package genkitadapter_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// scripted is a fake genkit model: turn i answers with script[i](request).
// It records every request it receives.
type scripted struct {
	mu       sync.Mutex
	script   []func(req *ai.ModelRequest) *ai.Message
	requests []*ai.ModelRequest
}

func (s *scripted) generate(_ context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	turn := len(s.requests)
	s.requests = append(s.requests, req)
	msg := ai.NewModelTextMessage("script exhausted")
	if turn < len(s.script) {
		msg = s.script[turn](req)
	}
	return &ai.ModelResponse{Message: msg, FinishReason: ai.FinishReasonStop, Request: req}, nil
}

// newGenkit returns a genkit instance with the scripted model registered.
func newGenkit(t testing.TB, s *scripted) (*genkit.Genkit, ai.Model) {
	t.Helper()
	g := genkit.Init(context.Background())
	m := genkit.DefineModel(g, "test/scripted", &ai.ModelOptions{
		Supports: &ai.ModelSupports{Multiturn: true, Tools: true, SystemRole: true},
	}, s.generate)
	return g, m
}

// callTools is a script step that asks for the given calls.
func callTools(reqs ...*ai.ToolRequest) func(*ai.ModelRequest) *ai.Message {
	return func(*ai.ModelRequest) *ai.Message {
		parts := make([]*ai.Part, len(reqs))
		for i, r := range reqs {
			parts[i] = ai.NewToolRequestPart(r)
		}
		return &ai.Message{Role: ai.RoleModel, Content: parts}
	}
}

// echoToolOutputs is a script step that answers with the JSON of the tool
// outputs of the last message, in order.
func echoToolOutputs(req *ai.ModelRequest) *ai.Message {
	last := req.Messages[len(req.Messages)-1]
	var outs []any
	for _, p := range last.Content {
		if p.IsToolResponse() {
			outs = append(outs, p.ToolResponse.Output)
		}
	}
	b, _ := json.Marshal(outs)
	return ai.NewModelTextMessage(string(b))
}

// toolOutputs decodes what echoToolOutputs wrote.
func toolOutputs(t *testing.T, text string) []any {
	t.Helper()
	var outs []any
	require.NoError(t, json.Unmarshal([]byte(text), &outs))
	return outs
}

// stub is a Resolver over functions.
type stub struct {
	tools []llmtoolkit.Tool
	run   map[string]func(context.Context, llmtoolkit.Call) (string, error)
}

func (s *stub) Tools() []llmtoolkit.Tool { return s.tools }

func (s *stub) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	fn, ok := s.run[call.Name]
	if !ok {
		return "", llmtoolkit.ErrUnknownTool
	}
	return fn(ctx, call)
}

// objectSchema is {"type":"object","properties":{NAME:{"type":"string"}},"required":[NAME]}.
func objectSchema(name string) map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{name: map[string]any{"type": "string"}},
		"required":   []any{name},
	}
}
