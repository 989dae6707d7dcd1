package agentloop_test

import (
	"context"
	"sync"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// BenchmarkRun measures the loop's own overhead: 3 rounds of 4 calls to an
// instant tool, then an answer.
func BenchmarkRun(b *testing.B) {
	fake := lt.NewFake(map[string]string{"t": "ok"})
	calls := []llmtoolkit.Call{{ID: "1", Name: "t"}, {ID: "2", Name: "t"}, {ID: "3", Name: "t"}, {ID: "4", Name: "t"}}
	send := func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
		if len(msgs) >= 2+3*5 {
			return agentloop.Response{Content: "done"}, nil
		}
		return agentloop.Response{ToolCalls: calls}, nil
	}
	for _, par := range []int{1, 8} {
		b.Run(map[int]string{1: "sequential", 8: "parallel"}[par], func(b *testing.B) {
			opts := agentloop.Options{Resolver: fake, MaxParallel: par, Logger: quiet}
			b.ReportAllocs()
			for b.Loop() {
				fake.Reset()
				if _, _, err := agentloop.Run(context.Background(), prompt(), send, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// passThrough is the thinnest Executor: it runs every step in-process,
// the calls of a turn concurrently up to MaxParallel, as the loop would.
type passThrough struct{}

func (passThrough) Model(ctx context.Context, _ agentloop.ModelStep, call func(context.Context) (agentloop.Response, error)) (agentloop.Response, error) {
	return call(ctx)
}

func (passThrough) Tools(ctx context.Context, step agentloop.ToolsStep, run func(context.Context, int) llmtoolkit.Result) ([]llmtoolkit.Result, error) {
	out := make([]llmtoolkit.Result, len(step.Calls))
	if step.MaxParallel == 1 {
		for i := range out {
			out[i] = run(ctx, i)
		}
		return out, nil
	}
	sem := make(chan struct{}, step.MaxParallel)
	var wg sync.WaitGroup
	for i := range out {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = run(ctx, i)
		})
	}
	wg.Wait()
	return out, nil
}

// BenchmarkRunExecutor measures the seam: BenchmarkRun's agent (3 rounds
// of 4 calls, then an answer) with no Executor and with a pass-through
// one.
func BenchmarkRunExecutor(b *testing.B) {
	fake := lt.NewFake(map[string]string{"t": "ok"})
	calls := []llmtoolkit.Call{{ID: "1", Name: "t"}, {ID: "2", Name: "t"}, {ID: "3", Name: "t"}, {ID: "4", Name: "t"}}
	send := func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
		if len(msgs) >= 2+3*5 {
			return agentloop.Response{Content: "done"}, nil
		}
		return agentloop.Response{ToolCalls: calls}, nil
	}
	for _, exec := range []agentloop.Executor{nil, passThrough{}} {
		for _, par := range []int{1, 8} {
			name := map[bool]string{true: "nil", false: "passthrough"}[exec == nil] + "/" + map[int]string{1: "sequential", 8: "parallel"}[par]
			b.Run(name, func(b *testing.B) {
				opts := agentloop.Options{Resolver: fake, MaxParallel: par, Logger: quiet, Executor: exec}
				b.ReportAllocs()
				for b.Loop() {
					fake.Reset()
					if _, _, err := agentloop.Run(context.Background(), prompt(), send, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
