package agentloop_test

import (
	"context"
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
