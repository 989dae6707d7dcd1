package llmtoolkittest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// TB is the part of testing.TB a [ScriptedModel] needs to fail a test.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// ErrScriptExhausted is returned by [ScriptedModel.Send] when the model is
// called more times than its script has turns.
var ErrScriptExhausted = errors.New("llmtoolkittest: the scripted model has no turn left")

// Turn is one scripted answer of a [ScriptedModel]: text, tool calls, an
// error, or a function that computes the answer.
type Turn struct {
	// Response is the answer (unless Err or Respond is set).
	Response agentloop.Response
	// Err, when set, is returned instead of an answer.
	Err error
	// Respond, when set, computes the answer from what the model was sent.
	Respond agentloop.SendFunc
}

// Reply is a turn that answers text with no tool calls (the loop's end).
func Reply(text string) Turn {
	return Turn{Response: agentloop.Response{Content: text, StopReason: "stop"}}
}

// CallTools is a turn that asks for the given tool calls. Calls without an
// ID get a deterministic one: "call_TURN_N" (both 1-based).
func CallTools(calls ...llmtoolkit.Call) Turn {
	return Turn{Response: agentloop.Response{ToolCalls: calls, StopReason: "tool_calls"}}
}

// Fail is a turn whose model call fails with err.
func Fail(err error) Turn { return Turn{Err: err} }

// Respond is a turn computed by fn from what the model was sent.
func Respond(fn agentloop.SendFunc) Turn { return Turn{Respond: fn} }

// Call builds a tool call with the given name and arguments (nil means {}).
func Call(name string, args map[string]any) llmtoolkit.Call {
	if args == nil {
		args = map[string]any{}
	}
	return llmtoolkit.Call{Name: name, Arguments: args}
}

// Request is what a [ScriptedModel] was sent in one call.
type Request struct {
	// Messages is a copy of the conversation sent.
	Messages []agentloop.Message
	// Tools are the tools offered.
	Tools []llmtoolkit.Tool
}

// ScriptedModel is a model for tests of agent loops: it answers from a
// script, one [Turn] per call, and records what it was sent. When the script
// runs out it fails the test (with Errorf, so it is safe outside the test's
// goroutine) and returns [ErrScriptExhausted]. A cancelled ctx is answered
// with ctx's error without using a turn. It is safe for concurrent use.
type ScriptedModel struct {
	t        TB
	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []Request
}

// NewScriptedModel returns a model that answers with turns, in order. t
// may be nil outside tests (an example, a demo, a dry run of a host): an
// exhausted script then only returns [ErrScriptExhausted].
func NewScriptedModel(t TB, turns ...Turn) *ScriptedModel {
	return &ScriptedModel{t: t, turns: slices.Clone(turns)}
}

// Send answers with the next turn. Its method value is an
// [agentloop.SendFunc]: agentloop.Run(ctx, msgs, model.Send, opts).
func (m *ScriptedModel) Send(ctx context.Context, messages []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
	if err := ctx.Err(); err != nil {
		return agentloop.Response{}, err
	}
	m.mu.Lock()
	m.requests = append(m.requests, Request{Messages: cloneMessages(messages), Tools: slices.Clone(tools)})
	n := m.next
	if n >= len(m.turns) {
		m.mu.Unlock()
		if m.t != nil {
			m.t.Helper()
			last := "none"
			if len(messages) > 0 {
				last = fmt.Sprintf("%s %q", messages[len(messages)-1].Role, messages[len(messages)-1].Content)
			}
			m.t.Errorf("llmtoolkittest: ScriptedModel: called %d times but the script has only %d turns; add a turn (last message sent: %s)",
				n+1, len(m.turns), last)
		}
		return agentloop.Response{}, fmt.Errorf("%w (call %d, %d turns)", ErrScriptExhausted, n+1, len(m.turns))
	}
	m.next++
	turn := m.turns[n]
	m.mu.Unlock()

	switch {
	case turn.Respond != nil:
		return turn.Respond(ctx, messages, tools)
	case turn.Err != nil:
		return agentloop.Response{}, turn.Err
	}
	resp := turn.Response
	if len(resp.ToolCalls) > 0 {
		calls := make([]llmtoolkit.Call, len(resp.ToolCalls))
		for i, c := range resp.ToolCalls {
			if c.ID == "" {
				c.ID = fmt.Sprintf("call_%d_%d", n+1, i+1)
			}
			calls[i] = c
		}
		resp.ToolCalls = calls
	}
	return resp, nil
}

// Requests returns a copy of everything the model was sent, in order.
func (m *ScriptedModel) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// LastRequest returns the last request, or a zero Request if there was none.
func (m *ScriptedModel) LastRequest() Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) == 0 {
		return Request{}
	}
	return m.requests[len(m.requests)-1]
}

// Remaining returns how many turns are left.
func (m *ScriptedModel) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.turns) - m.next
}

func cloneMessages(messages []agentloop.Message) []agentloop.Message {
	out := slices.Clone(messages)
	for i := range out {
		out[i].ToolCalls = slices.Clone(out[i].ToolCalls)
	}
	return out
}
