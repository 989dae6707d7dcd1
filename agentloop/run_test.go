package agentloop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// quiet keeps the completion log out of the test output.
var quiet = slog.New(slog.DiscardHandler)

func prompt() []agentloop.Message {
	return []agentloop.Message{agentloop.SystemMessage("You are terse."), agentloop.UserMessage("Go.")}
}

func roles(msgs []agentloop.Message) []agentloop.Role {
	out := make([]agentloop.Role, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role
	}
	return out
}

const (
	sys  = agentloop.RoleSystem
	usr  = agentloop.RoleUser
	asst = agentloop.RoleAssistant
	tool = agentloop.RoleTool
)

func TestRunPlainAnswer(t *testing.T) {
	fake := lt.NewFake(map[string]string{"echo": "e"})
	model := lt.NewScriptedModel(t, lt.Reply("Hello."))
	in := prompt()
	resp, history, err := agentloop.Run(t.Context(), in, model.Send, agentloop.Options{Resolver: fake, Logger: quiet})
	require.NoError(t, err)
	assert.Equal(t, "Hello.", resp.Content)
	assert.Equal(t, []agentloop.Role{sys, usr, asst}, roles(history))
	assert.Equal(t, "Hello.", history[2].Content)
	assert.Len(t, in, 2, "Run must not modify the caller's messages")
	reqs := model.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, in, reqs[0].Messages)
	require.Len(t, reqs[0].Tools, 1)
	assert.Equal(t, "echo", reqs[0].Tools[0].Name)
	assert.Empty(t, fake.Calls())
}

func TestRunSeveralToolRounds(t *testing.T) {
	fake := lt.NewFake(map[string]string{"list": "a.txt b.txt", "read": "contents of a"})
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("list", nil)),
		lt.CallTools(lt.Call("read", map[string]any{"path": "a.txt"})),
		lt.Reply("a.txt says: contents of a"),
	)
	resp, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet})
	require.NoError(t, err)
	assert.Equal(t, "a.txt says: contents of a", resp.Content)
	assert.Equal(t, []agentloop.Role{sys, usr, asst, tool, asst, tool, asst}, roles(history))
	assert.Equal(t, agentloop.Message{Role: tool, Content: "a.txt b.txt", ToolCallID: "call_1_1", ToolName: "list"}, history[3])
	assert.Equal(t, agentloop.Message{Role: tool, Content: "contents of a", ToolCallID: "call_2_1", ToolName: "read"}, history[5])
	assert.Equal(t, "call_2_1", history[4].ToolCalls[0].ID)

	reqs := model.Requests()
	require.Len(t, reqs, 3)
	assert.Len(t, reqs[1].Messages, 4, "second request carries the first round's results")
	assert.Equal(t, history[:6], reqs[2].Messages)
	require.Len(t, fake.Calls(), 2)
	assert.Equal(t, "a.txt", fake.Calls()[1].Arguments["path"])
}

// TestRunParallelCallsKeepOrder makes the first call wait for the last one to
// finish: it can only succeed if the calls run concurrently, and the results
// must still come back in call order.
func TestRunParallelCallsKeepOrder(t *testing.T) {
	lastDone := make(chan struct{})
	fake := &lt.Fake{}
	fake.Handle("slow", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		select {
		case <-lastDone:
			return "slow done", nil
		case <-time.After(30 * time.Second):
			return "", errors.New("the other calls never finished: calls did not run in parallel")
		}
	})
	fake.Handle("mid", func(context.Context, llmtoolkit.Call) (string, error) { return "mid done", nil })
	fake.Handle("fast", func(context.Context, llmtoolkit.Call) (string, error) {
		defer close(lastDone)
		return "fast done", nil
	})
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("slow", nil), lt.Call("mid", nil), lt.Call("fast", nil)),
		lt.Reply("done"),
	)
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet})
	require.NoError(t, err)
	require.Len(t, history, 7)
	var got []string
	for _, m := range history[3:6] {
		require.Equal(t, tool, m.Role)
		got = append(got, m.ToolName+"="+m.Content+"@"+m.ToolCallID)
	}
	assert.Equal(t, []string{"slow=slow done@call_1_1", "mid=mid done@call_1_2", "fast=fast done@call_1_3"}, got)
}

func TestRunSequentialWhenMaxParallelIsOne(t *testing.T) {
	var running, maxRunning atomic.Int32
	fake := &lt.Fake{}
	fake.Handle("t", func(context.Context, llmtoolkit.Call) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(time.Millisecond) // widen the window an overlap would need
		return "ok", nil
	})
	model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("t", nil), lt.Call("t", nil), lt.Call("t", nil), lt.Call("t", nil)), lt.Reply("done"))
	_, _, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, MaxParallel: 1, Logger: quiet})
	require.NoError(t, err)
	assert.Equal(t, int32(1), maxRunning.Load())
	assert.Len(t, fake.Calls(), 4)
}

func TestRunFeedsBackUnknownToolAndBadArguments(t *testing.T) {
	readTool := llmtoolkit.MustTool("read", "Reads a file.", map[string]any{
		"type":       "object",
		"properties": map[string]any{"path": map[string]any{"type": "string"}},
		"required":   []any{"path"},
	})
	fake := (&lt.Fake{}).Add(readTool, func(context.Context, llmtoolkit.Call) (string, error) { return "text", nil })
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("read", map[string]any{"path": 42}), lt.Call("nope", nil)),
		lt.CallTools(lt.Call("read", map[string]any{"path": "a"})),
		lt.Reply("fixed it"),
	)
	resp, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet})
	require.NoError(t, err)
	assert.Equal(t, "fixed it", resp.Content)
	bad, unknown := history[3], history[4]
	assert.True(t, bad.IsError)
	assert.Contains(t, bad.Content, `invalid arguments for tool "read"`)
	assert.Contains(t, bad.Content, "/path")
	assert.True(t, unknown.IsError)
	assert.Contains(t, unknown.Content, `unknown tool: "nope"`)
	assert.Contains(t, unknown.Content, "read")
	assert.Equal(t, "text", history[6].Content)
	assert.Len(t, fake.CallsTo("read"), 1, "the tool is not called with invalid arguments")
}

func TestRunMaxIterations(t *testing.T) {
	fake := lt.NewFake(map[string]string{"again": "more"})
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("again", nil)),
		lt.CallTools(lt.Call("again", nil)),
	)
	resp, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, MaxIterations: 2, Logger: quiet})
	require.ErrorIs(t, err, agentloop.ErrMaxIterations)
	assert.Contains(t, err.Error(), "2 iterations")
	assert.Equal(t, "call_2_1", resp.ToolCalls[0].ID, "the last response is returned")
	assert.Equal(t, []agentloop.Role{sys, usr, asst, tool, asst, tool}, roles(history), "every call keeps its result")
	assert.Equal(t, 0, model.Remaining())
}

func TestRunDefaultMaxIterations(t *testing.T) {
	fake := lt.NewFake(map[string]string{"again": "more"})
	var calls atomic.Int32
	send := func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
		calls.Add(1)
		return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "x", Name: "again"}}}, nil
	}
	_, _, err := agentloop.Run(t.Context(), prompt(), send, agentloop.Options{Resolver: fake, Logger: quiet})
	require.ErrorIs(t, err, agentloop.ErrMaxIterations)
	assert.Equal(t, int32(agentloop.DefaultMaxIterations), calls.Load())
}

func TestRunCircuitBreaker(t *testing.T) {
	diskFull := errors.New("disk full")
	tests := []struct {
		name      string
		threshold int
		script    []lt.Turn
		wantTrip  bool
		wantCount int
	}{
		{
			name: "default threshold trips on the third identical failure",
			script: []lt.Turn{
				lt.CallTools(lt.Call("save", nil)),
				lt.CallTools(lt.Call("save", nil), lt.Call("ok", nil)), // other tools do not reset the streak
				lt.CallTools(lt.Call("save", nil)),
			},
			wantTrip: true, wantCount: 3,
		},
		{
			name:      "threshold option",
			threshold: 2,
			script:    []lt.Turn{lt.CallTools(lt.Call("save", nil)), lt.CallTools(lt.Call("save", nil))},
			wantTrip:  true, wantCount: 2,
		},
		{
			name:      "identical failures within one turn count",
			threshold: 2,
			script:    []lt.Turn{lt.CallTools(lt.Call("save", nil), lt.Call("save", nil))},
			wantTrip:  true, wantCount: 2,
		},
		{
			name: "a different error resets the streak",
			script: []lt.Turn{
				lt.CallTools(lt.Call("save", nil)),
				lt.CallTools(lt.Call("save", map[string]any{"other": true})),
				lt.CallTools(lt.Call("save", nil)),
				lt.Reply("gave up"),
			},
		},
		{
			name:      "negative threshold disables the breaker",
			threshold: -1,
			script: []lt.Turn{
				lt.CallTools(lt.Call("save", nil)), lt.CallTools(lt.Call("save", nil)),
				lt.CallTools(lt.Call("save", nil)), lt.CallTools(lt.Call("save", nil)),
				lt.Reply("gave up"),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := lt.NewFake(map[string]string{"ok": "fine"})
			fake.Handle("save", func(_ context.Context, call llmtoolkit.Call) (string, error) {
				if call.Arguments["other"] == true {
					return "", errors.New("permission denied")
				}
				return "", diskFull
			})
			model := lt.NewScriptedModel(t, tc.script...)
			_, history, err := agentloop.Run(t.Context(), prompt(), model.Send,
				agentloop.Options{Resolver: fake, BreakerThreshold: tc.threshold, Logger: quiet})
			if !tc.wantTrip {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, agentloop.ErrCircuitBreaker)
			var cbe *agentloop.CircuitBreakerError
			require.ErrorAs(t, err, &cbe)
			assert.Equal(t, "save", cbe.Tool)
			assert.Equal(t, "disk full", cbe.Message)
			assert.Equal(t, tc.wantCount, cbe.Count)
			assert.Contains(t, err.Error(), `tool "save"`)
			assert.Contains(t, err.Error(), "disk full")
			assert.Equal(t, tool, history[len(history)-1].Role, "the failing turn's results are kept")
			assert.Equal(t, 0, model.Remaining())
		})
	}
}

// TestRunHalt: a tool's Halt stops the loop at once; a sibling call still
// running is cancelled, and every call keeps a tool message.
func TestRunHalt(t *testing.T) {
	fake := &lt.Fake{}
	fake.Handle("wait", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(30 * time.Second):
			return "", errors.New("not cancelled by the halt")
		}
	})
	fake.Handle("stop", func(context.Context, llmtoolkit.Call) (string, error) {
		return "", llmtoolkit.Halt("the user asked to stop")
	})
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("wait", nil), lt.Call("stop", nil)),
		lt.Reply("never sent"),
	)
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet})
	require.ErrorIs(t, err, agentloop.ErrHalted)
	require.ErrorIs(t, err, llmtoolkit.ErrHalt)
	var he *agentloop.HaltedError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "stop", he.Tool)
	assert.Equal(t, "the user asked to stop", he.Reason)
	var lhe *llmtoolkit.HaltError
	require.ErrorAs(t, err, &lhe)
	assert.Equal(t, "the user asked to stop", lhe.Reason)
	assert.Equal(t, 1, model.Remaining(), "the model is not called after a halt")
	require.Equal(t, []agentloop.Role{sys, usr, asst, tool, tool}, roles(history))
	assert.Contains(t, history[3].Content, "cancelled")
	assert.True(t, history[4].IsError)
}

func TestRunModelError(t *testing.T) {
	boom := errors.New("503 overloaded")
	fake := lt.NewFake(map[string]string{"t": "ok"})
	model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("t", nil)), lt.Fail(boom))
	resp, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet})
	require.ErrorIs(t, err, boom)
	var le *agentloop.LLMError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 2, le.Iteration)
	assert.Contains(t, err.Error(), "iteration 2")
	assert.Equal(t, "t", resp.ToolCalls[0].Name, "the last response received is returned")
	assert.Equal(t, []agentloop.Role{sys, usr, asst, tool}, roles(history))
}

func TestRunCancellation(t *testing.T) {
	t.Run("during a tool call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		fake := &lt.Fake{}
		fake.Handle("cancel", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			cancel()
			<-ctx.Done()
			return "", ctx.Err()
		})
		model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("cancel", nil)), lt.Reply("never"))
		_, history, err := agentloop.Run(ctx, prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet})
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, model.Remaining())
		assert.Equal(t, []agentloop.Role{sys, usr, asst, tool}, roles(history))
	})
	t.Run("during the model call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		send := func(ctx context.Context, _ []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			cancel()
			<-ctx.Done()
			return agentloop.Response{}, fmt.Errorf("http: request canceled")
		}
		_, _, err := agentloop.Run(ctx, prompt(), send, agentloop.Options{Logger: quiet})
		require.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "request canceled")
	})
	t.Run("before starting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		model := lt.NewScriptedModel(t, lt.Reply("never"))
		_, history, err := agentloop.Run(ctx, prompt(), model.Send, agentloop.Options{Logger: quiet})
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, model.Remaining())
		assert.Len(t, history, 2)
	})
}

func TestRunEventsInOrder(t *testing.T) {
	fake := &lt.Fake{}
	fake.Handle("show", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "file", Payload: map[string]any{"path": "a.txt"}})
		llmtoolkit.ReportProgress(ctx, llmtoolkit.Progress{Progress: 1, Total: 2, Message: "half"})
		return "shown", nil
	})
	fake.Returns("plain", "plain")
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("show", nil), lt.Call("plain", nil)),
		lt.Reply("done"),
	)
	var events []string
	_, _, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{
		Resolver: fake, MaxParallel: 1, Logger: quiet,
		OnEvent: func(e agentloop.Event) {
			s := fmt.Sprintf("%d %s", e.Iteration, e.Kind)
			switch e.Kind {
			case agentloop.EventResponse:
				s += " " + e.Response.Content
			case agentloop.EventToolCall:
				s += " " + e.Call.ID + " " + e.Call.Name
			case agentloop.EventDisplay:
				s += " " + e.Call.ID + " " + e.Display.Kind + " " + e.Display.Payload.(map[string]any)["path"].(string)
			case agentloop.EventProgress:
				s += fmt.Sprintf(" %s %g/%g %s", e.Call.ID, e.Progress.Progress, e.Progress.Total, e.Progress.Message)
			case agentloop.EventToolResult:
				s += " " + e.Call.ID + " " + e.Result.Content
			}
			events = append(events, s)
		},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"1 response ",
		"1 tool_call call_1_1 show",
		"1 display call_1_1 file a.txt",
		"1 progress call_1_1 1/2 half",
		"1 tool_result call_1_1 shown",
		"1 tool_call call_1_2 plain",
		"1 tool_result call_1_2 plain",
		"2 response done",
	}, events)
}

func TestRunOnIteration(t *testing.T) {
	fake := lt.NewFake(map[string]string{"a": "A", "b": "B"})
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("a", nil), lt.Call("b", nil)),
		lt.Turn{Response: agentloop.Response{Content: "done", Usage: agentloop.Usage{InputTokens: 10, OutputTokens: 2}}},
	)
	var its []agentloop.Iteration
	_, _, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{
		Resolver: fake, Logger: quiet, OnIteration: func(it agentloop.Iteration) { its = append(its, it) },
	})
	require.NoError(t, err)
	require.Len(t, its, 2)
	assert.Equal(t, 1, its[0].N)
	require.Len(t, its[0].Calls, 2)
	require.Len(t, its[0].Results, 2)
	require.Len(t, its[0].CallDurations, 2)
	assert.Equal(t, "A", its[0].Results[0].Content)
	assert.Equal(t, "B", its[0].Results[1].Content)
	assert.GreaterOrEqual(t, its[0].ToolsDuration, its[0].CallDurations[0])
	assert.Equal(t, 2, its[1].N)
	assert.Empty(t, its[1].Calls)
	assert.Equal(t, 10, its[1].Response.Usage.InputTokens)
	assert.Equal(t, agentloop.Usage{InputTokens: 11, OutputTokens: 3}, its[1].Response.Usage.Add(agentloop.Usage{InputTokens: 1, OutputTokens: 1}))
}

func TestRunSessionResolverFuncValidatesAgainstTools(t *testing.T) {
	greet := llmtoolkit.MustTool("greet", "Greets someone.", map[string]any{
		"type":       "object",
		"properties": map[string]any{"name": map[string]any{"type": "string"}},
		"required":   []any{"name"},
	})
	fake := (&lt.Fake{}).Add(greet, func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		return fmt.Sprintf("hello %s from %v", call.Arguments["name"], llmtoolkit.ScopeFrom(ctx).Session["user"]), nil
	}).Returns("secret", "s3cr3t")
	tools, fn := llmtoolkit.PrepareSession(fake, []string{"greet"}, map[string]any{"user": "ann"})
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("greet", map[string]any{}), lt.Call("secret", nil), lt.Call("greet", map[string]any{"name": "bob"})),
		lt.Reply("done"),
	)
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fn, Tools: tools, Logger: quiet})
	require.NoError(t, err)
	require.Len(t, model.Requests()[0].Tools, 1)
	assert.Contains(t, history[3].Content, "missing properties")
	assert.True(t, history[4].IsError)
	assert.Contains(t, history[4].Content, `unknown tool: "secret"`)
	assert.Equal(t, "hello bob from ann", history[5].Content)
	assert.Len(t, fake.Calls(), 1, "only the valid, offered call reaches the resolver")
}

func TestRunEmptySession(t *testing.T) {
	tools, fn := llmtoolkit.PrepareSession(lt.NewFake(nil), []string{"missing"}, nil)
	require.NotNil(t, fn)
	model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("missing", nil)), lt.Reply("ok"))
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fn, Tools: tools, Logger: quiet})
	require.NoError(t, err)
	assert.True(t, history[3].IsError)
	assert.Contains(t, history[3].Content, "no tools are")
}

func TestRunToolsSeeTheirIteration(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	fake := lt.NewFake(nil).Handle("probe", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		n, ok := llmtoolkit.ScopeFrom(ctx).Iteration, llmtoolkit.ScopeFrom(ctx).Iteration > 0
		if !ok {
			return "", errors.New("no iteration in the context")
		}
		mu.Lock()
		seen[call.ID] = n
		mu.Unlock()
		return "ok", nil
	})
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("probe", nil), lt.Call("probe", nil)),
		lt.CallTools(lt.Call("probe", nil)),
		lt.CallTools(lt.Call("probe", nil), lt.Call("probe", nil)),
		lt.Reply("done"),
	)
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet})
	require.NoError(t, err)
	want := map[string]int{}
	iteration := 0
	for _, m := range history {
		if m.Role == asst && len(m.ToolCalls) > 0 {
			iteration++
			for _, c := range m.ToolCalls {
				want[c.ID] = iteration
			}
		}
	}
	require.Len(t, want, 5)
	assert.Equal(t, want, seen, "each call's context names the iteration it ran in")
}

func TestRunSendFuncPanicIsAnError(t *testing.T) {
	send := func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
		var m map[string]int
		//lint:ignore SA5000 the nil map write is the point: a runtime panic
		m["boom"]++ // a nil map write: a bug in the host's model adapter
		return agentloop.Response{}, nil
	}
	var resp agentloop.Response
	var err error
	require.NotPanics(t, func() {
		resp, _, err = agentloop.Run(t.Context(), prompt(), send, agentloop.Options{Logger: quiet})
	})
	require.Error(t, err)
	var llmErr *agentloop.LLMError
	require.ErrorAs(t, err, &llmErr)
	assert.Equal(t, 1, llmErr.Iteration)
	var pe *agentloop.ModelPanicError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, agentloop.ErrModelPanic)
	assert.Contains(t, fmt.Sprint(pe.Value), "assignment to entry in nil map")
	assert.Contains(t, err.Error(), "assignment to entry in nil map")
	assert.NotEmpty(t, pe.Stack)
	assert.Empty(t, resp.Content)
}

func TestRunInvalidOptions(t *testing.T) {
	model := lt.NewScriptedModel(t)
	for name, opts := range map[string]agentloop.Options{
		"negative MaxIterations": {MaxIterations: -1},
		"negative MaxParallel":   {MaxParallel: -2},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := agentloop.Run(t.Context(), prompt(), model.Send, opts)
			require.ErrorIs(t, err, agentloop.ErrInvalidOptions)
		})
	}
	_, history, err := agentloop.Run(t.Context(), prompt(), nil, agentloop.Options{})
	require.ErrorIs(t, err, agentloop.ErrInvalidOptions)
	assert.Contains(t, err.Error(), "SendFunc")
	assert.Len(t, history, 2)
}

func TestRunLogsOneRecord(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	fake := lt.NewFake(map[string]string{"t": "ok"})
	model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("t", nil), lt.Call("t", nil)), lt.Reply("done"))
	_, _, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: logger})
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	require.Len(t, lines, 1)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(lines[0], &rec))
	assert.Equal(t, "DEBUG", rec["level"], "quiet by default")
	assert.Equal(t, float64(2), rec["iterations"])
	assert.Equal(t, float64(2), rec["tool_calls"])
	assert.Contains(t, rec, "duration")
	assert.NotContains(t, rec, "error")

	buf.Reset()
	_, _, err = agentloop.Run(t.Context(), prompt(), lt.NewScriptedModel(t, lt.Fail(errors.New("boom"))).Send, agentloop.Options{Logger: logger})
	require.Error(t, err)
	require.NoError(t, json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &rec))
	assert.Equal(t, "WARN", rec["level"])
	assert.Contains(t, rec["error"], "boom")
}

// TestRunRaceParallelDispatch runs many parallel calls with displays,
// events and iteration callbacks; run it with -race.
func TestRunRaceParallelDispatch(t *testing.T) {
	var resolved atomic.Int64
	fake := &lt.Fake{}
	fake.Handle("work", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		resolved.Add(1)
		llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "process", Payload: map[string]any{"n": call.Arguments["n"]}})
		return fmt.Sprint(call.Arguments["n"]), nil
	})
	const rounds, perRound = 4, 24
	var turns []lt.Turn
	for r := range rounds {
		var calls []llmtoolkit.Call
		for i := range perRound {
			calls = append(calls, lt.Call("work", map[string]any{"n": r*perRound + i}))
		}
		turns = append(turns, lt.CallTools(calls...))
	}
	turns = append(turns, lt.Reply("done"))
	model := lt.NewScriptedModel(t, turns...)
	var mu sync.Mutex
	perCall := map[string][]agentloop.EventKind{}
	var inCallback atomic.Int32
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{
		Resolver: fake, MaxParallel: 6, Logger: quiet,
		OnEvent: func(e agentloop.Event) {
			if inCallback.Add(1) != 1 {
				t.Errorf("OnEvent called concurrently")
			}
			defer inCallback.Add(-1)
			if e.Kind == agentloop.EventResponse {
				return
			}
			mu.Lock()
			perCall[e.Call.ID] = append(perCall[e.Call.ID], e.Kind)
			mu.Unlock()
		},
	})
	require.NoError(t, err)
	assert.Equal(t, int64(rounds*perRound), resolved.Load())
	require.Len(t, perCall, rounds*perRound)
	for id, kinds := range perCall {
		assert.Equal(t, []agentloop.EventKind{agentloop.EventToolCall, agentloop.EventDisplay, agentloop.EventToolResult}, kinds, id)
	}
	n := 0
	for _, m := range history {
		if m.Role == tool {
			assert.Equal(t, fmt.Sprint(n), m.Content, "results in call order")
			n++
		}
	}
	assert.Equal(t, rounds*perRound, n)
}
