package provider_test

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// paddedPNG returns a valid PNG of at least size bytes: tinyPNG with a
// private ancillary chunk before its IEND.
func paddedPNG(t testing.TB, size int) []byte {
	b := tinyPNG(t)
	end := b[len(b)-12:]
	pad := size - len(b) - 12
	chunk := binary.BigEndian.AppendUint32(nil, uint32(pad))
	chunk = append(chunk, "prVt"...)
	chunk = append(chunk, make([]byte, pad)...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	return append(append(append([]byte{}, b[:len(b)-12]...), chunk...), end...)
}

// peakHeap runs fn and returns the highest HeapAlloc seen above the
// starting one (sampled every 200 µs, and once at the end), and the bytes
// fn allocated in all.
func peakHeap(fn func()) (peak, total uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, alloc0 := ms.HeapAlloc, ms.TotalAlloc
	var top atomic.Uint64
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapAlloc > base && m.HeapAlloc-base > top.Load() {
			top.Store(m.HeapAlloc - base)
		}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	fn()
	sample()
	close(stop)
	<-done
	runtime.ReadMemStats(&ms)
	return top.Load(), ms.TotalAlloc - alloc0
}

// A 5 MiB image through read_file → Execute → agentloop → each format's
// encoder (the request body as json.Marshal writes it), and the peak heap.
// Copies: read_file reads the file once into a buffer of its size (1×),
// shared by the Result, the tool message and the wire structs; the wire
// struct that holds the part writes its JSON, base64 encoded straight from
// the bytes, into one buffer of exact size (1.33×); json.Marshal copies it
// into its own buffer (1.33×, more while that buffer grows) and returns a
// copy of that (1.33×). The floor with json.Marshal is thus about 5×
// while the garbage is not yet collected; the first run of a process
// measures 3.7×.
func TestFiveMiBImageMemoryPerFormat(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates tens of MiB per format")
	}
	const size = 5 << 20
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.png"), paddedPNG(t, size), 0o644))
	ct, err := codetools.New(dir)
	require.NoError(t, err)
	defer ct.Close()
	for _, name := range []string{"anthropic", "openai-responses", "openai-chat", "gemini"} {
		w := wires[name]
		t.Run(name, func(t *testing.T) {
			var bodyLen int
			newModel := func() *llmtoolkittest.ScriptedModel {
				return llmtoolkittest.NewScriptedModel(t,
					llmtoolkittest.Respond(func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
						return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "call_1", Name: "read_file", Arguments: map[string]any{"path": "big.png"}}}}, nil
					}),
					llmtoolkittest.Respond(func(_ context.Context, history []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
						body := w.request(t, history, tools)
						bodyLen = len(body)
						return w.parse(testdata(t, finalAnswers[name]))
					}),
				)
			}
			// Three runs: the median peak is reported (the first run also
			// grows encoding/json's pooled buffers, which later runs reuse,
			// as a host's do).
			var peaks, totals []uint64
			var history []agentloop.Message
			for range 3 {
				model := newModel()
				var runErr error
				peak, total := peakHeap(func() {
					_, history, runErr = agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("Look at big.png")},
						model.Send, agentloop.Options{Resolver: ct, MaxTurnResultBytes: 8 << 20})
				})
				require.NoError(t, runErr)
				peaks, totals = append(peaks, peak), append(totals, total)
			}
			slices.Sort(peaks)
			slices.Sort(totals)
			peak, total := peaks[1], totals[1]
			require.Len(t, history, 4)
			require.Len(t, history[2].Parts, 1, history[2].Content)
			t.Logf("%s: request body %d bytes (%.2f× the file); median of 3 runs: peak heap %.1f MiB (%.2f× the file), allocated %.1f MiB in all (runs: %v)",
				name, bodyLen, float64(bodyLen)/size, float64(peak)/(1<<20), float64(peak)/size, float64(total)/(1<<20), peaks)
			// The target is 4×; json.Marshal's own buffer and the
			// copy it returns keep the median above it (see the doc
			// comment): this bound guards against a regression.
			assert.Less(t, peak, uint64(7*size), "peak heap under 7× the file")
		})
	}
}
