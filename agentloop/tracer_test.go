package agentloop_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// recTracer records what a Run tells its Tracer, and marks the contexts it
// returns so that tests can see where they go.
type recTracer struct {
	mu     sync.Mutex
	events []string
	runEnd *agentloop.RunEnd
	ends   []error // each model call's error
}

type markKey struct{}

func (r *recTracer) log(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recTracer) StartRun(ctx context.Context) (context.Context, func(agentloop.RunEnd)) {
	r.log("run")
	return context.WithValue(ctx, markKey{}, "run"), func(e agentloop.RunEnd) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, "run end")
		r.runEnd = &e
	}
}

func (r *recTracer) StartModelCall(ctx context.Context, n int) (context.Context, func(agentloop.Response, error)) {
	from, _ := ctx.Value(markKey{}).(string) // the run's, if ctx derives from it
	r.log(fmt.Sprintf("model %d in %s", n, from))
	return context.WithValue(ctx, markKey{}, "model"), func(_ agentloop.Response, err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, "model end")
		r.ends = append(r.ends, err)
	}
}

func TestTracerSeesRunAndModelCalls(t *testing.T) {
	// Two calls in parallel, each waiting for the other: they only finish
	// if they run at once, with the run's context.
	var started sync.WaitGroup
	started.Add(2)
	var seen sync.Map
	wait := func(ctx context.Context, c llmtoolkit.Call) (string, error) {
		seen.Store(c.ID, ctx.Value(markKey{}))
		started.Done()
		done := make(chan struct{})
		go func() { started.Wait(); close(done) }()
		select {
		case <-done:
			return "ok", nil
		case <-time.After(30 * time.Second):
			return "", errors.New("the other call never started: calls did not run in parallel")
		}
	}
	fake := (&lt.Fake{}).Handle("a", wait).Handle("b", wait)
	var modelCtx []any
	model := lt.NewScriptedModel(t,
		lt.Respond(func(ctx context.Context, _ []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			modelCtx = append(modelCtx, ctx.Value(markKey{}))
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "1", Name: "a"}, {ID: "2", Name: "b"}}, StopReason: "tool_calls",
				Usage: agentloop.Usage{InputTokens: 10, OutputTokens: 3}}, nil
		}),
		lt.Respond(func(ctx context.Context, _ []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			modelCtx = append(modelCtx, ctx.Value(markKey{}))
			return agentloop.Response{Content: "done", StopReason: "stop"}, nil
		}))
	tr := &recTracer{}
	resp, _, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, Tracer: tr, MaxParallel: 4, Logger: quiet})
	require.NoError(t, err)
	assert.Equal(t, "done", resp.Content)

	assert.Equal(t, []string{"run", "model 1 in run", "model end", "model 2 in run", "model end", "run end"}, tr.events)
	assert.Equal(t, []any{"model", "model"}, modelCtx, "the SendFunc gets the context StartModelCall returned")
	for _, id := range []string{"1", "2"} {
		v, _ := seen.Load(id)
		assert.Equal(t, "run", v, "tool call %s must run with the run's context", id)
	}
	require.NotNil(t, tr.runEnd)
	assert.Equal(t, agentloop.RunEnd{Response: resp, Iterations: 2, ToolCalls: 2}, *tr.runEnd)
	assert.Equal(t, []error{nil, nil}, tr.ends)
}

func TestTracerSeesFailures(t *testing.T) {
	boom := errors.New("model unavailable")
	cases := []struct {
		name      string
		turn      lt.Turn
		wantModel func(t *testing.T, err error)
		wantRun   func(t *testing.T, err error)
	}{
		{
			name: "model error",
			turn: lt.Fail(boom),
			wantModel: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, boom)
			},
			wantRun: func(t *testing.T, err error) {
				var llmErr *agentloop.LLMError
				assert.ErrorAs(t, err, &llmErr)
			},
		},
		{
			name: "model panic",
			turn: lt.Respond(func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
				panic("provider bug")
			}),
			wantModel: func(t *testing.T, err error) {
				var pe *agentloop.ModelPanicError
				assert.ErrorAs(t, err, &pe, "the model call's end sees the panic as a *ModelPanicError")
			},
			wantRun: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, agentloop.ErrModelPanic)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &recTracer{}
			model := lt.NewScriptedModel(t, tc.turn)
			_, _, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Tracer: tr, Logger: quiet})
			require.Error(t, err)
			assert.Equal(t, []string{"run", "model 1 in run", "model end", "run end"}, tr.events)
			require.Len(t, tr.ends, 1)
			tc.wantModel(t, tr.ends[0])
			require.NotNil(t, tr.runEnd)
			assert.Equal(t, err, tr.runEnd.Err, "the run's end gets the error Run returns")
			tc.wantRun(t, tr.runEnd.Err)
		})
	}
}
