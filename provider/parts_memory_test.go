package provider_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
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
	"github.com/llmtoolkit/llmtoolkit/provider"
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

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// A 5 MiB image through read_file → Execute → agentloop → each format's
// encoder, and the peak heap (the median of three runs), for the request
// body written three ways:
//
//   - provider.MarshalRequest: read_file reads the file once into a
//     buffer of its size (1×), shared by the Result, the tool message and
//     the wire structs (no copy); the body is written into one buffer of
//     its exact size, the base64 encoded straight from the bytes into it
//     (1.33×), the small members from a scratch buffer of a few KiB.
//     About 2.4× in all; asserted under 4×.
//   - provider.WriteRequest to an io.Writer (here one that counts, as an
//     io.Pipe to an http.Request would pass it on): the file (1×) and a
//     32 KiB buffer; asserted under 4×.
//   - json.Marshal, for comparison (logged, not asserted): the base64
//     buffer of the part's MarshalJSON (1.33×), encoding/json's copy of
//     it into its growing buffer (1.33×, more while it grows), and the
//     copy it returns (1.33×): 3.7× to 6.4× by when the collector runs.
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
	encoders := []struct {
		name   string
		encode func(body any) (int, error)
		bound  float64 // 0: logged only
	}{
		{"MarshalRequest", func(body any) (int, error) {
			b, err := provider.MarshalRequest(body)
			return len(b), err
		}, 4},
		{"WriteRequest", func(body any) (int, error) {
			var w countingWriter
			err := provider.WriteRequest(&w, body)
			return w.n, err
		}, 4},
		{"json.Marshal", func(body any) (int, error) {
			b, err := json.Marshal(body)
			return len(b), err
		}, 0},
	}
	for _, name := range []string{"anthropic", "openai-responses", "openai-chat", "gemini"} {
		w := wires[name]
		for _, enc := range encoders {
			t.Run(name+"/"+enc.name, func(t *testing.T) {
				var bodyLen int
				newModel := func() *llmtoolkittest.ScriptedModel {
					return llmtoolkittest.NewScriptedModel(t,
						llmtoolkittest.Respond(func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
							return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "call_1", Name: "read_file", Arguments: map[string]any{"path": "big.png"}}}}, nil
						}),
						llmtoolkittest.Respond(func(_ context.Context, history []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
							n, err := enc.encode(w.body(t, history, tools))
							if err != nil {
								return agentloop.Response{}, err
							}
							bodyLen = n
							return w.parse(testdata(t, finalAnswers[name]))
						}),
					)
				}
				// Three runs: the median peak is reported (the first run
				// also grows encoding/json's pooled buffers, which later
				// runs reuse, as a host's do).
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
				t.Logf("%s, %s: request body %d bytes (%.2f× the file); median of 3 runs: peak heap %.1f MiB (%.2f× the file), allocated %.1f MiB in all (%.2f×) (runs: %v)",
					name, enc.name, bodyLen, float64(bodyLen)/size, float64(peak)/(1<<20), float64(peak)/size, float64(total)/(1<<20), float64(total)/size, peaks)
				if enc.bound > 0 {
					// The peak heap cannot exceed what the run allocated:
					// both are bounded, the second whatever the
					// collector's timing.
					assert.Less(t, float64(peak)/size, enc.bound, "peak heap under %v× the file", enc.bound)
					assert.Less(t, float64(total)/size, enc.bound, "allocated under %v× the file", enc.bound)
				}
			})
		}
	}
}
