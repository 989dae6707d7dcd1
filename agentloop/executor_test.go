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

// journal is what a durable engine stores: each step's outcome as JSON,
// in the order the steps completed.
type journal struct {
	Entries []entry `json:"entries"`
}

type entry struct {
	Key     string          `json:"key"` // "model/ITERATION" or "tool/ITERATION/INDEX/CALLID"
	Outcome json.RawMessage `json:"outcome"`
}

// recorder is a fake durable engine: it runs a step and records its
// outcome when the journal has none for its key, else returns the
// recorded one without running the step.
type recorder struct {
	t          *testing.T
	mu         sync.Mutex
	byKey      map[string]json.RawMessage
	log        journal
	modelCalls atomic.Int32 // steps run, not replayed
	toolRuns   atomic.Int32
	replayed   atomic.Int32
}

func newRecorder(t *testing.T, j journal) *recorder {
	r := &recorder{t: t, byKey: map[string]json.RawMessage{}}
	for _, e := range j.Entries {
		r.byKey[e.Key] = e.Outcome
	}
	return r
}

func (r *recorder) lookup(key string) (json.RawMessage, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.byKey[key]
	return b, ok
}

func (r *recorder) record(key string, v any) {
	b, err := json.Marshal(v)
	require.NoError(r.t, err)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byKey[key] = b
	r.log.Entries = append(r.log.Entries, entry{Key: key, Outcome: b})
}

// journal returns the journal as it would be read back from a store.
func (r *recorder) journal() journal {
	r.mu.Lock()
	b, err := json.Marshal(r.log)
	r.mu.Unlock()
	require.NoError(r.t, err)
	var j journal
	require.NoError(r.t, json.Unmarshal(b, &j))
	return j
}

func (r *recorder) Model(ctx context.Context, step agentloop.ModelStep, call func(context.Context) (agentloop.Response, error)) (agentloop.Response, error) {
	key := fmt.Sprintf("model/%d", step.Iteration)
	if b, ok := r.lookup(key); ok {
		r.replayed.Add(1)
		var o agentloop.ModelOutcome
		require.NoError(r.t, json.Unmarshal(b, &o))
		return o.Unpack()
	}
	r.modelCalls.Add(1)
	resp, err := call(ctx)
	r.record(key, agentloop.EncodeModel(resp, err))
	return resp, err
}

func (r *recorder) Tools(ctx context.Context, step agentloop.ToolsStep, run func(context.Context, int) llmtoolkit.Result) ([]llmtoolkit.Result, error) {
	results := make([]llmtoolkit.Result, len(step.Calls))
	var wg sync.WaitGroup
	for i, c := range step.Calls {
		key := fmt.Sprintf("tool/%d/%d/%s", step.Iteration, i, c.ID)
		if b, ok := r.lookup(key); ok {
			r.replayed.Add(1)
			var o agentloop.ToolOutcome
			require.NoError(r.t, json.Unmarshal(b, &o))
			results[i] = o.Result()
			continue
		}
		wg.Go(func() {
			r.toolRuns.Add(1)
			res := run(ctx, i)
			r.record(key, agentloop.EncodeResult(res))
			results[i] = res
		})
	}
	wg.Wait()
	return results, nil
}

// replayAgent is a 3-turn scripted agent: two turns of tool calls (the
// second of three parallel calls that complete in reverse order, one of
// them failing), then an answer. Its tools count their runs.
func replayAgent(t *testing.T) (*lt.ScriptedModel, *lt.Fake, *atomic.Int32) {
	var runs atomic.Int32
	fake := &lt.Fake{}
	fake.Handle("slow", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		runs.Add(1)
		d := time.Duration(call.Arguments["ms"].(float64)) * time.Millisecond
		time.Sleep(d)
		llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "waited", Payload: map[string]any{"ms": call.Arguments["ms"]}})
		return fmt.Sprintf("waited %v", d), nil
	})
	fake.Handle("fail", func(context.Context, llmtoolkit.Call) (string, error) {
		runs.Add(1)
		return "", llmtoolkit.Deny("fail", "not today")
	})
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("slow", map[string]any{"ms": 1.0})),
		lt.CallTools(
			lt.Call("slow", map[string]any{"ms": 60.0}),
			lt.Call("slow", map[string]any{"ms": 30.0}),
			lt.Call("fail", nil),
		),
		lt.Reply("all done"),
	)
	return model, fake, &runs
}

// TestExecutorReplay: a run through a recording executor, then a second
// Run from the same messages with the recorded outcomes (read back from
// JSON) returns the same response and history without calling the model
// or any tool.
func TestExecutorReplay(t *testing.T) {
	model, fake, runs := replayAgent(t)
	rec := newRecorder(t, journal{})
	resp, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet, Executor: rec})
	require.NoError(t, err)
	assert.Equal(t, "all done", resp.Content)
	assert.Equal(t, int32(3), rec.modelCalls.Load())
	assert.Equal(t, int32(4), rec.toolRuns.Load())
	assert.Equal(t, int32(4), runs.Load())
	j := rec.journal()
	require.Len(t, j.Entries, 7)
	// The second turn's calls completed in reverse order: the journal says
	// so, and the history keeps call order.
	assert.Equal(t, []string{"tool/2/2/call_2_3", "tool/2/1/call_2_2", "tool/2/0/call_2_1"},
		[]string{j.Entries[3].Key, j.Entries[4].Key, j.Entries[5].Key})

	send := func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
		t.Error("the model was called again on replay")
		return agentloop.Response{}, errors.New("not on replay")
	}
	fake.Reset()
	replay := newRecorder(t, j)
	var events []agentloop.Event
	resp2, history2, err := agentloop.Run(t.Context(), prompt(), send, agentloop.Options{
		Resolver: fake, Logger: quiet, Executor: replay,
		OnEvent: func(e agentloop.Event) { events = append(events, e) },
	})
	require.NoError(t, err)
	assert.Equal(t, resp, resp2)
	assert.Equal(t, history, history2)
	assert.Equal(t, int32(4), runs.Load(), "no tool ran again")
	assert.Empty(t, fake.Calls())
	assert.Equal(t, int32(0), replay.modelCalls.Load()+replay.toolRuns.Load())
	assert.Equal(t, int32(7), replay.replayed.Load())
	for _, e := range events {
		assert.Equal(t, agentloop.EventResponse, e.Kind, "a replayed call emits no tool events")
	}
}

// TestExecutorReplayInAnyCompletionOrder: the outcomes of a parallel turn
// are found by (iteration, index, call ID), so the order the journal holds
// them in does not matter.
func TestExecutorReplayInAnyCompletionOrder(t *testing.T) {
	model, fake, _ := replayAgent(t)
	rec := newRecorder(t, journal{})
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet, Executor: rec})
	require.NoError(t, err)
	j := rec.journal()
	orders := map[string][]int{
		"recorded": {0, 1, 2, 3, 4, 5, 6},
		"reversed": {6, 5, 4, 3, 2, 1, 0},
		"shuffled": {4, 0, 6, 2, 5, 1, 3},
	}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			var shuffled journal
			for _, k := range order {
				shuffled.Entries = append(shuffled.Entries, j.Entries[k])
			}
			replay := newRecorder(t, shuffled)
			_, got, err := agentloop.Run(t.Context(), prompt(), lt.NewScriptedModel(t).Send, agentloop.Options{Resolver: fake, Logger: quiet, Executor: replay})
			require.NoError(t, err)
			assert.Equal(t, history, got)
			require.Len(t, got, 9)
			assert.Equal(t, agentloop.RoleTool, got[7].Role)
			assert.True(t, got[7].IsError)
			assert.Contains(t, got[7].Content, "not today")
		})
	}
}

// TestExecutorResumesAnInterruptedRun: a journal that stops in the middle
// of a parallel turn (the process died) resumes with the recorded steps
// replayed and only the missing ones run.
func TestExecutorResumesAnInterruptedRun(t *testing.T) {
	model, fake, runs := replayAgent(t)
	rec := newRecorder(t, journal{})
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet, Executor: rec})
	require.NoError(t, err)
	j := rec.journal()
	j.Entries = j.Entries[:4] // model 1, tool 1, model 2, the first call of turn 2 that completed
	runs.Store(0)

	model2 := lt.NewScriptedModel(t, lt.Reply("all done"))
	replay := newRecorder(t, j)
	_, got, err := agentloop.Run(t.Context(), prompt(), model2.Send, agentloop.Options{Resolver: fake, Logger: quiet, Executor: replay})
	require.NoError(t, err)
	assert.Equal(t, history, got)
	assert.Equal(t, int32(2), runs.Load(), "the two calls of turn 2 not recorded ran; the recorded ones did not")
	assert.Equal(t, int32(1), replay.modelCalls.Load())
}

// TestExecutorHalt: a halting tool halts the run through the executor,
// and again when the halt is replayed.
func TestExecutorHalt(t *testing.T) {
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
	model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("wait", nil), lt.Call("stop", nil)), lt.Reply("never sent"))
	rec := newRecorder(t, journal{})
	check := func(t *testing.T, history []agentloop.Message, err error) {
		t.Helper()
		require.ErrorIs(t, err, agentloop.ErrHalted)
		require.ErrorIs(t, err, llmtoolkit.ErrHalt)
		var he *agentloop.HaltedError
		require.ErrorAs(t, err, &he)
		assert.Equal(t, "stop", he.Tool)
		assert.Equal(t, "the user asked to stop", he.Reason)
		require.Equal(t, []agentloop.Role{sys, usr, asst, tool, tool}, roles(history))
		assert.Contains(t, history[3].Content, "cancelled")
	}
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet, Executor: rec})
	check(t, history, err)
	assert.Equal(t, 1, model.Remaining(), "the model is not called after a halt")

	t.Run("replayed", func(t *testing.T) {
		replay := newRecorder(t, rec.journal())
		_, history2, err := agentloop.Run(t.Context(), prompt(), lt.NewScriptedModel(t).Send, agentloop.Options{Resolver: fake, Logger: quiet, Executor: replay})
		check(t, history2, err)
		assert.Equal(t, history, history2)
	})
}

// TestExecutorModelErrorReplays: a model call that failed is recorded and
// replayed as the model's failure (an *LLMError), not the engine's.
func TestExecutorModelErrorReplays(t *testing.T) {
	model := lt.NewScriptedModel(t, lt.Fail(errors.New("503 overloaded")))
	rec := newRecorder(t, journal{})
	_, _, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Logger: quiet, Executor: rec})
	var le *agentloop.LLMError
	require.ErrorAs(t, err, &le)
	assert.NotErrorIs(t, err, agentloop.ErrExecutor)

	replay := newRecorder(t, rec.journal())
	_, _, err2 := agentloop.Run(t.Context(), prompt(), lt.NewScriptedModel(t).Send, agentloop.Options{Logger: quiet, Executor: replay})
	require.ErrorAs(t, err2, &le)
	assert.NotErrorIs(t, err2, agentloop.ErrExecutor)
	assert.Equal(t, err.Error(), err2.Error())
}

// failing is an executor whose engine fails: in the model step of
// iteration modelAt, or in the tools step after running the first call.
type failing struct {
	modelAt int
	err     error
	partial bool // Tools returns the results it has beside the error
}

func (f failing) Model(ctx context.Context, step agentloop.ModelStep, call func(context.Context) (agentloop.Response, error)) (agentloop.Response, error) {
	if step.Iteration == f.modelAt {
		return agentloop.Response{}, f.err
	}
	return call(ctx)
}

func (f failing) Tools(ctx context.Context, step agentloop.ToolsStep, run func(context.Context, int) llmtoolkit.Result) ([]llmtoolkit.Result, error) {
	if f.modelAt != 0 {
		out := make([]llmtoolkit.Result, len(step.Calls))
		for i := range step.Calls {
			out[i] = run(ctx, i)
		}
		return out, nil
	}
	first := run(ctx, 0)
	if f.partial {
		out := make([]llmtoolkit.Result, len(step.Calls))
		out[0] = first
		return out, f.err
	}
	return nil, f.err
}

// TestExecutorError: an engine failure ends the run with an
// *ExecutorError wrapping it, and the history stays paired.
func TestExecutorError(t *testing.T) {
	dbDown := errors.New("database is gone")
	tests := []struct {
		name      string
		exec      agentloop.Executor
		step      string
		iteration int
		roles     []agentloop.Role
		kept      int // tool messages that carry a real result
	}{
		{"model step", failing{modelAt: 2, err: dbDown}, agentloop.StepModel, 2, []agentloop.Role{sys, usr, asst, tool, tool}, 2},
		{"tools step", failing{err: dbDown}, agentloop.StepTools, 1, []agentloop.Role{sys, usr, asst, tool, tool}, 0},
		{"tools step, partial", failing{err: dbDown, partial: true}, agentloop.StepTools, 1, []agentloop.Role{sys, usr, asst, tool, tool}, 1},
		{"wrong number of results", countless{}, agentloop.StepTools, 1, []agentloop.Role{sys, usr, asst, tool, tool}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := lt.NewFake(map[string]string{"t": "ok"})
			model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("t", nil), lt.Call("t", nil)), lt.Reply("done"))
			_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet, Executor: tc.exec})
			require.ErrorIs(t, err, agentloop.ErrExecutor)
			var ee *agentloop.ExecutorError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, tc.step, ee.Step)
			assert.Equal(t, tc.iteration, ee.Iteration)
			if _, ok := tc.exec.(countless); !ok {
				assert.ErrorIs(t, err, dbDown)
			}
			var le *agentloop.LLMError
			assert.False(t, errors.As(err, &le), "the engine's failure is not the model's")
			require.Equal(t, tc.roles, roles(history))
			assert.Equal(t, history[2].ToolCalls[0].ID, history[3].ToolCallID, "every call keeps its tool message")
			assert.Equal(t, history[2].ToolCalls[1].ID, history[4].ToolCallID)
			kept := 0
			for _, m := range history[3:] {
				if m.Content == "ok" {
					kept++
				} else {
					assert.True(t, m.IsError)
					assert.Contains(t, m.Content, "outcome is unknown")
				}
			}
			assert.Equal(t, tc.kept, kept)
		})
	}
}

// countless returns no results.
type countless struct{}

func (countless) Model(ctx context.Context, _ agentloop.ModelStep, call func(context.Context) (agentloop.Response, error)) (agentloop.Response, error) {
	return call(ctx)
}

func (countless) Tools(context.Context, agentloop.ToolsStep, func(context.Context, int) llmtoolkit.Result) ([]llmtoolkit.Result, error) {
	return nil, nil
}

// TestRunToolCall: the exported per-call function answers as the loop
// does: a call past MaxToolCalls, a tool not offered, a run tool with its
// iteration, a cut result, and unusable arguments.
func TestRunToolCall(t *testing.T) {
	fake := &lt.Fake{}
	fake.Handle("iter", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		n := llmtoolkit.ScopeFrom(ctx).Iteration
		return fmt.Sprint("iteration ", n), nil
	})
	fake.Handle("big", func(context.Context, llmtoolkit.Call) (string, error) {
		return string(make([]byte, 5000)), nil
	})
	calls := []llmtoolkit.Call{{ID: "a", Name: "iter"}, {ID: "b", Name: "nope"}, {ID: "c", Name: "big"}, {ID: "d", Name: "iter"}}
	opts := agentloop.Options{Resolver: fake, Tools: fake.Tools(), MaxToolCalls: 3, MaxTurnResultBytes: 1000, Logger: quiet}
	tests := []struct {
		name    string
		opts    agentloop.Options
		i       int
		content string
		err     error
	}{
		{"runs with its iteration", opts, 0, "iteration 7", nil},
		{"not offered", opts, 1, `unknown tool: "nope"`, llmtoolkit.ErrUnknownTool},
		{"cut", opts, 2, "bytes cut", nil},
		{"past MaxToolCalls", opts, 3, "was not run", agentloop.ErrTooManyCalls},
		{"index out of range", opts, 4, "run was called for call 4", agentloop.ErrExecutor},
		{"negative index", opts, -1, "run was called for call -1", agentloop.ErrExecutor},
		{"invalid options", agentloop.Options{MaxIterations: -1}, 0, "MaxIterations is -1", agentloop.ErrInvalidOptions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := agentloop.RunToolCall(t.Context(), tc.opts, 7, calls, tc.i)
			assert.Contains(t, res.Content, tc.content)
			if tc.err != nil {
				assert.True(t, res.IsError)
				assert.ErrorIs(t, res.Err, tc.err)
			} else {
				assert.False(t, res.IsError, res.Content)
				assert.LessOrEqual(t, len(res.Content), 1000)
			}
			if tc.i >= 0 && tc.i < len(calls) {
				assert.Equal(t, calls[tc.i].ID, res.ToolCallID)
			}
		})
	}
}

// TestRunToolCallIsTheLoopsCall: what RunToolCall returns for each call
// of a turn is what the loop put in the history.
func TestRunToolCallIsTheLoopsCall(t *testing.T) {
	fake := lt.NewFake(map[string]string{"t": "ok"}).Fails("bad", errors.New("broken"))
	calls := []llmtoolkit.Call{lt.Call("t", nil), lt.Call("bad", nil), lt.Call("missing", nil), lt.Call("t", map[string]any{"x": 1.0})}
	for i := range calls {
		calls[i].ID = fmt.Sprint("c", i)
	}
	model := lt.NewScriptedModel(t, lt.CallTools(calls...), lt.Reply("done"))
	opts := agentloop.Options{Resolver: fake, Logger: quiet, MaxToolCalls: 3}
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, opts)
	require.NoError(t, err)
	for i := range calls {
		res := agentloop.RunToolCall(t.Context(), opts, 1, calls, i)
		assert.Equal(t, history[3+i], agentloop.ToolMessage(res), "call %d", i)
	}
}

// ctxEngine runs the calls, then fails as an engine does when the run's
// context ends: with the context's error.
type ctxEngine struct{ countless }

func (ctxEngine) Tools(ctx context.Context, step agentloop.ToolsStep, run func(context.Context, int) llmtoolkit.Result) ([]llmtoolkit.Result, error) {
	out := make([]llmtoolkit.Result, len(step.Calls))
	out[0] = run(ctx, 0)
	return out, ctx.Err()
}

// TestExecutorCancelled: when the run's context ends during the tools
// step, the run stops as without an executor (an error wrapping the
// context's), with the executor's error beside it and a paired history.
func TestExecutorCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	fake := &lt.Fake{}
	fake.Handle("cancel", func(context.Context, llmtoolkit.Call) (string, error) {
		cancel()
		return "cancelled the run", nil
	})
	model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("cancel", nil), lt.Call("cancel", nil)), lt.Reply("never sent"))
	_, history, err := agentloop.Run(ctx, prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet, Executor: ctxEngine{}})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, agentloop.ErrExecutor)
	assert.Contains(t, err.Error(), "stopped in iteration 1")
	require.Equal(t, []agentloop.Role{sys, usr, asst, tool, tool}, roles(history))
	assert.Equal(t, "cancelled the run", history[3].Content)
	assert.True(t, history[4].IsError)
}

// detached is an engine that runs each call with a context of its own (as
// an activity does) and asks for a call that does not exist.
type detached struct {
	countless
	stray *llmtoolkit.Result
}

func (d detached) Tools(_ context.Context, step agentloop.ToolsStep, run func(context.Context, int) llmtoolkit.Result) ([]llmtoolkit.Result, error) {
	out := make([]llmtoolkit.Result, len(step.Calls))
	for i := range out {
		out[i] = run(context.Background(), i)
	}
	*d.stray = run(context.Background(), len(out))
	return out, nil
}

// TestExecutorRunDefends: run(ctx, i) gives the call its iteration on a
// context that lacks it, and answers an index out of range with an error
// result instead of panicking.
func TestExecutorRunDefends(t *testing.T) {
	fake := &lt.Fake{}
	fake.Handle("iter", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		n, ok := llmtoolkit.ScopeFrom(ctx).Iteration, llmtoolkit.ScopeFrom(ctx).Iteration > 0
		return fmt.Sprint(n, ok), nil
	})
	model := lt.NewScriptedModel(t, lt.Reply("first"), lt.CallTools(lt.Call("iter", nil)), lt.Reply("done"))
	var stray llmtoolkit.Result
	stop := func(_ context.Context, r agentloop.Response) (string, bool) { return "go on", r.Content == "first" }
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Logger: quiet, Stop: stop, Executor: detached{stray: &stray}})
	require.NoError(t, err)
	assert.Equal(t, "2 true", history[5].Content)
	assert.True(t, stray.IsError)
	assert.ErrorIs(t, stray.Err, agentloop.ErrExecutor)
}

// TestRunToolCallOnEventPanic: a panic of OnEvent is logged, and the call
// still answers (there is no run for it to end).
func TestRunToolCallOnEventPanic(t *testing.T) {
	var logs bytes.Buffer
	fake := lt.NewFake(map[string]string{"t": "ok"})
	opts := agentloop.Options{Resolver: fake, Logger: slog.New(slog.NewTextHandler(&logs, nil)), OnEvent: func(agentloop.Event) { panic("ui gone") }}
	res := agentloop.RunToolCall(t.Context(), opts, 1, []llmtoolkit.Call{{ID: "a", Name: "t"}}, 0)
	assert.Equal(t, "ok", res.Content)
	assert.Contains(t, logs.String(), "ui gone")
}

// TestRunNow: the durations the loop reports come from Options.Now when it
// is set, and a panic in it fails the run.
func TestRunNow(t *testing.T) {
	ticks := 0
	clock := func() time.Time { ticks++; return time.Unix(int64(ticks), 0) } // one second per read
	fake := lt.NewFake(map[string]string{"t": "ok"})
	model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("t", nil)), lt.Reply("done"))
	var its []agentloop.Iteration
	var results []time.Duration
	_, _, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{
		Resolver: fake, Logger: quiet, Now: clock,
		OnIteration: func(it agentloop.Iteration) { its = append(its, it) },
		OnEvent: func(e agentloop.Event) {
			if e.Kind == agentloop.EventToolResult {
				results = append(results, e.Duration)
			}
		},
	})
	require.NoError(t, err)
	require.Len(t, its, 2)
	assert.Equal(t, time.Second, its[0].ModelDuration)
	assert.Equal(t, []time.Duration{time.Second}, its[0].CallDurations)
	assert.Equal(t, 3*time.Second, its[0].ToolsDuration, "the turn's reads: its start, the call's two, its end")
	assert.Equal(t, []time.Duration{time.Second}, results)

	model = lt.NewScriptedModel(t, lt.Reply("done"))
	_, _, err = agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Logger: quiet, Now: func() time.Time { panic("no clock") }})
	var pe *agentloop.CallbackPanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "Now", pe.Callback)
}
