package codetools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// BenchmarkEditDiagnosticsGopls measures gopls on a copy of this
// repository's core module (GOWORK=off): the cold start to the first
// diagnostics, the median latency of 50 edit_file calls with diagnostics
// on against the same edits off, and the server's RSS. Run it alone:
//
//	eval "$(bash scripts/langservers.sh)"
//	go test ./codetools -run '^$' -bench EditDiagnosticsGopls -benchtime 1x
func BenchmarkEditDiagnosticsGopls(b *testing.B) {
	server := goplsServer(b)
	server.Env = append(server.Env, "GOWORK=off")
	repo, err := filepath.Abs("..")
	require.NoError(b, err)
	dir := b.TempDir()
	archive := exec.Command("sh", "-c", "git -C "+repo+" archive HEAD | tar -x -C "+dir)
	out, err := archive.CombinedOutput()
	require.NoError(b, err, "%s", out)
	const rounds = 50
	for range b.N {
		c, err := New(dir, WithLanguageServers(server), WithLanguageServerLimits(LanguageServerLimits{Settle: 5 * time.Minute, StartTimeout: 5 * time.Minute}))
		require.NoError(b, err)
		edit := func(name string, args map[string]any) (string, time.Duration) {
			start := time.Now()
			res := llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: name, Arguments: args})
			require.False(b, res.IsError, res.Content)
			return res.Content, time.Since(start)
		}
		content, cold := edit("write_file", map[string]any{"path": "codetools/zz_bench.go", "content": "package codetools\n\nconst benchN int = \"x\"\n"})
		require.Contains(b, content, "gopls reports 1 error")
		var on, off []time.Duration
		for i := range rounds {
			content, d := edit("edit_file", map[string]any{"path": "codetools/zz_bench.go", "oldText": fmt.Sprintf("benchN int = %s", value(i)), "newText": "benchN int = " + value(i+1)})
			require.Contains(b, content, "gopls reports", content)
			on = append(on, d)
		}
		st := c.lsp.Stats()
		require.NoError(b, c.Close())
		plain, err := New(dir, WithLanguageServers(server), WithoutDiagnostics("edit_file"))
		require.NoError(b, err)
		for i := rounds; i < 2*rounds; i++ {
			start := time.Now()
			res := llmtoolkit.Execute(context.Background(), plain, llmtoolkit.Call{Name: "edit_file", Arguments: map[string]any{"path": "codetools/zz_bench.go",
				"oldText": "benchN int = " + value(i), "newText": "benchN int = " + value(i+1)}})
			require.False(b, res.IsError, res.Content)
			off = append(off, time.Since(start))
		}
		require.NoError(b, plain.Close())
		mOn, mOff := median(on), median(off)
		load, _ := os.ReadFile("/proc/loadavg")
		b.ReportMetric(float64(cold.Milliseconds()), "cold-ms")
		b.ReportMetric(float64(mOn.Microseconds())/1000, "on-median-ms")
		b.ReportMetric(float64(mOff.Microseconds())/1000, "off-median-ms")
		if len(st) == 1 {
			b.ReportMetric(float64(st[0].RSS>>20), "gopls-rss-MiB")
		}
		b.Logf("cold start to first diagnostics %s; edit_file median of %d: on %s, off %s (+%s); load %s",
			cold.Round(time.Millisecond), rounds, mOn.Round(time.Microsecond), mOff.Round(time.Microsecond), (mOn - mOff).Round(time.Microsecond), strings.TrimSpace(string(load)))
	}
}

// value is the i-th value of the benchmark's constant: "x" (a type error)
// at first, then numbers.
func value(i int) string {
	if i == 0 {
		return `"x"`
	}
	return fmt.Sprint(i)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkGoplsRestart measures what a restart of the servers costs (a
// new hidden path, a replaced cover) against the first start: gopls on a
// copy of this repository's core module, sandboxed, the time from the
// edit that starts it to its first diagnostics, cold and then after
// each of three restarts (the server's home and caches are kept across
// restarts: gopls's file cache and the go build cache stay warm). Run it
// alone:
//
//	go test ./codetools -run '^$' -bench GoplsRestart -benchtime 1x
func BenchmarkGoplsRestart(b *testing.B) {
	server := goplsServer(b)
	server.Env = append(server.Env, "GOWORK=off")
	repo, err := filepath.Abs("..")
	require.NoError(b, err)
	dir := b.TempDir()
	out, err := exec.Command("sh", "-c", "git -C "+repo+" archive HEAD | tar -x -C "+dir).CombinedOutput()
	require.NoError(b, err, "%s", out)
	for range b.N {
		c, err := New(dir, WithLanguageServers(server), WithLanguageServerLimits(LanguageServerLimits{Settle: 5 * time.Minute, StartTimeout: 5 * time.Minute}))
		require.NoError(b, err)
		edit := func(i int) time.Duration {
			start := time.Now()
			res := llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "codetools/zz_bench.go",
				"content": fmt.Sprintf("package codetools\n\nconst benchN%d int = \"x\"\n", i)}})
			require.False(b, res.IsError, res.Content)
			require.Contains(b, res.Content, "gopls reports 1 error")
			return time.Since(start)
		}
		cold := edit(0)
		var warm []time.Duration
		for i := 1; i <= 3; i++ {
			c.lsp.Restart()
			warm = append(warm, edit(i))
		}
		require.NoError(b, c.Close())
		load, _ := os.ReadFile("/proc/loadavg")
		b.ReportMetric(float64(cold.Milliseconds()), "cold-ms")
		b.ReportMetric(float64(median(warm).Milliseconds()), "restart-median-ms")
		b.Logf("first start to first diagnostics %s; after a restart %v (median %s); load %s",
			cold.Round(time.Millisecond), warm, median(warm).Round(time.Millisecond), strings.TrimSpace(string(load)))
	}
}
