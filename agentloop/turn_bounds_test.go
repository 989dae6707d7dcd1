package agentloop_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// bigReader is a resolver whose one tool answers each call with a fresh
// string of size bytes, as read_file does with a 256 KiB file.
type bigReader struct {
	size int
	runs atomic.Int64
}

func (b *bigReader) Tools() []llmtoolkit.Tool {
	return []llmtoolkit.Tool{llmtoolkit.MustTool("read", "Reads a big file.", nil)}
}

func (b *bigReader) Resolve(_ context.Context, call llmtoolkit.Call) (string, error) {
	b.runs.Add(1)
	return call.ID + ":" + strings.Repeat("x", b.size), nil
}

// manyCalls is a model that asks for n calls of read in its first answer
// and then ends; it keeps nothing.
func manyCalls(n int) agentloop.SendFunc {
	turn := 0
	return func(_ context.Context, _ []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
		turn++
		if turn > 1 {
			return agentloop.Response{Content: "done"}, nil
		}
		calls := make([]llmtoolkit.Call, n)
		for i := range calls {
			calls[i] = llmtoolkit.Call{ID: fmt.Sprintf("c%d", i), Name: "read", Arguments: map[string]any{}}
		}
		return agentloop.Response{ToolCalls: calls}, nil
	}
}

// peakHeapGrowth runs fn and returns how much the heap in use grew at its
// highest, sampled every 5 ms.
func peakHeapGrowth(fn func()) int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return int64(peak.Load()) - int64(before)
}

// TestTurnBounds: one answer with 10,000 read_file calls of a 256 KiB
// file grew memory by 1.55 GiB (40,000 ran out of memory under a 4 GB
// cap). Now one turn runs at most MaxToolCalls calls, the others are
// answered with an error the model reads, and the results kept are cut
// at MaxTurnResultBytes, marked.
func TestTurnBounds(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		const calls = 2000
		r := &bigReader{size: 256 << 10}
		var history []agentloop.Message
		var err error
		grown := peakHeapGrowth(func() {
			_, history, err = agentloop.Run(t.Context(), nil, manyCalls(calls), agentloop.Options{Resolver: r, Logger: quiet})
		})
		t.Logf("peak heap growth %d MiB", grown>>20)
		require.NoError(t, err, "the calls not run do not trip the breaker")
		assert.EqualValues(t, agentloop.DefaultMaxToolCalls, r.runs.Load(), "only MaxToolCalls calls ran")
		assert.Less(t, grown, int64(160<<20), "memory is bounded by MaxToolCalls × the result size")

		require.Len(t, history, 1+calls+1, "every call has its tool message")
		kept := 0
		for i, m := range history[1 : 1+calls] {
			require.Equal(t, fmt.Sprintf("c%d", i), m.ToolCallID)
			kept += len(m.Content)
			cut := strings.Contains(m.Content, "bytes cut: one turn keeps at most 4194304 bytes of tool results (Options.MaxTurnResultBytes)")
			switch {
			case i < 15: // 15 results of 256 KiB and a few bytes fit in 4 MiB
				require.False(t, m.IsError)
				require.Equal(t, len(m.ToolCallID)+1+256<<10, len(m.Content), "within the budget: whole")
			case i < agentloop.DefaultMaxToolCalls:
				require.False(t, m.IsError)
				require.True(t, cut, "result %d is cut and marked", i)
			default:
				require.True(t, m.IsError)
				require.Contains(t, m.Content, `call "read" was not run: this answer asked for 2000 tool calls and one turn runs at most 128 (Options.MaxToolCalls)`)
			}
		}
		assert.Less(t, kept, agentloop.DefaultMaxTurnResultBytes+calls*512, "the history keeps about the budget")
	})
	t.Run("configured", func(t *testing.T) {
		r := &bigReader{size: 2000}
		var results []llmtoolkit.Result
		_, _, err := agentloop.Run(t.Context(), nil, manyCalls(5), agentloop.Options{Resolver: r, Logger: quiet,
			MaxToolCalls: 3, MaxTurnResultBytes: 3000, MaxParallel: 1,
			OnIteration: func(it agentloop.Iteration) {
				if len(it.Results) > 0 {
					results = it.Results
				}
			}})
		require.NoError(t, err)
		assert.EqualValues(t, 3, r.runs.Load())
		require.Len(t, results, 5)
		assert.Equal(t, 2003, len(results[0].Content), "whole")
		assert.Equal(t, 3000-2003, len(results[1].Content), "cut to what is left, the note included")
		head := strings.Index(results[1].Content, "\n[... ")
		assert.True(t, strings.Contains(results[1].Content, fmt.Sprintf("\n[... %d of 2003 bytes cut: one turn keeps at most 3000 bytes", 2003-head)))
		assert.True(t, strings.Contains(results[2].Content, "bytes cut"), "past the budget: a short head and the note")
		assert.Equal(t, 256, len(results[2].Content))
		for _, res := range results[3:] {
			assert.ErrorIs(t, res.Err, agentloop.ErrTooManyCalls)
			assert.Contains(t, res.Content, "one turn runs at most 3 (Options.MaxToolCalls); ask again for the calls you still need, at most 3 at a time")
		}
	})
	t.Run("invalid", func(t *testing.T) {
		for _, o := range []agentloop.Options{{MaxToolCalls: -1}, {MaxTurnResultBytes: -1}} {
			_, _, err := agentloop.Run(t.Context(), nil, manyCalls(1), o)
			assert.ErrorIs(t, err, agentloop.ErrInvalidOptions)
		}
	})
}
