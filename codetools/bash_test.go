//go:build unix

package codetools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

func TestBash(t *testing.T) {
	t.Parallel()
	ct := newTools(t, WithBashEnv("TEST_FOO=bar"))
	tests := []struct {
		name    string
		command string
		want    string
		wantErr string
	}{
		{"output", "echo hello", "hello", ""},
		{"merged in order", "echo a; echo b >&2; echo c", "a\nb\nc", ""},
		{"working directory", "pwd", ct.Root(), ""},
		{"no output", "true", "(no output)", ""},
		{"stdin is empty", "read x; echo got:$x", "got:", ""},
		{"env", "echo $TEST_FOO", "bar", ""},
		{"exit code", "echo oops; exit 3", "", "oops\n\nCommand exited with code 3"},
		{"exit code no output", "exit 4", "", "Command exited with code 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := run(t, ct, "bash", map[string]any{"command": tt.command})
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				assert.ErrorIs(t, err, ErrCommandFailed)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestBashOptions(t *testing.T) {
	t.Setenv("TEST_SECRET", "hunter2")
	ct := newTools(t, WithBashCleanEnv(), WithBashEnv("TEST_KEEP=1"), WithBashShell("/bin/sh"))
	got, err := run(t, ct, "bash", map[string]any{"command": `echo "${TEST_SECRET:-none} $TEST_KEEP $0"`})
	require.NoError(t, err)
	assert.Equal(t, "none 1 /bin/sh", got)

}

// Commands start from a minimal environment: the host's variables, secrets
// above all, pass only when the host says so.
func TestBashEnvironment(t *testing.T) {
	t.Setenv("TEST_SECRET", "hunter2")
	t.Setenv("OPENAI_API_KEY", "sk-host")
	t.Setenv("TEST_PLAIN", "plain")
	t.Setenv("LANG", "C.UTF-8")
	show := `echo "${TEST_SECRET:-none} ${OPENAI_API_KEY:-none} ${TEST_PLAIN:-none} ${LANG:-none} ${PATH:+path} $PWD"; env | grep -c . `
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"default: minimal", nil, "none none none C.UTF-8 path ROOT"},
		{"named, secrets included", []Option{WithBashInheritEnv("TEST_SECRET", "TEST_PLAIN")}, "hunter2 none plain C.UTF-8 path ROOT"},
		{"all but secrets", []Option{WithBashInheritEnv()}, "none none plain C.UTF-8 path ROOT"},
		{"all, one secret named", []Option{WithBashInheritEnv(), WithBashInheritEnv("OPENAI_API_KEY")}, "none sk-host plain C.UTF-8 path ROOT"},
		{"WithBashEnv wins", []Option{WithBashEnv("TEST_SECRET=given")}, "given none none C.UTF-8 path ROOT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := newTools(t, tt.opts...)
			got, err := run(t, ct, "bash", map[string]any{"command": show})
			require.NoError(t, err)
			first, _, _ := strings.Cut(got, "\n")
			assert.Equal(t, strings.ReplaceAll(tt.want, "ROOT", ct.Root()), first)
		})
	}
}

func TestBashTimeout(t *testing.T) {
	ct := newTools(t)
	began := time.Now()
	_, err := run(t, ct, "bash", map[string]any{"command": "echo started; sleep 60", "timeout": 1})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrCommandFailed)
	assert.Equal(t, "started\n\nCommand timed out after 1 seconds", err.Error())
	assert.Less(t, time.Since(began), 30*time.Second)

	_, err = run(t, ct, "bash", map[string]any{"command": "true", "timeout": 601})
	assert.ErrorIs(t, err, llmtoolkit.ErrInvalidArguments)
}

// groupAlive reports whether any process of group pgid is left.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func TestBashCancelKillsProcessGroup(t *testing.T) {
	t.Parallel()
	ct := newTools(t, withoutContainment()) // reads host pids
	pidFile := filepath.Join(ct.Root(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := ct.Resolve(ctx, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{
			"command": "sleep 1000 & sleep 1000 & echo $$ > pid.tmp && mv pid.tmp pid; wait"}})
		done <- err
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(pidFile); return err == nil }, 30*time.Second, 10*time.Millisecond)
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pgid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	require.True(t, groupAlive(pgid), "the command's group should be running")

	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(30 * time.Second):
		t.Fatal("bash did not return after cancellation")
	}
	assert.Eventually(t, func() bool { return !groupAlive(pgid) }, 30*time.Second, 20*time.Millisecond,
		"processes of group %d are left", pgid)
}

func TestBashTailTruncation(t *testing.T) {
	t.Parallel()
	ct := newTools(t)
	got, err := run(t, ct, "bash", map[string]any{"command": "seq 1 3000"})
	require.NoError(t, err)
	m := regexp.MustCompile(`\n\n\[Showing lines 1001-3000 of 3000\. Full output: (.+)\]$`).FindStringSubmatch(got)
	require.NotNil(t, m, got[max(0, len(got)-200):])
	assert.True(t, strings.HasPrefix(got, "1001\n1002\n"))
	full, err := os.ReadFile(m[1])
	require.NoError(t, err)
	t.Cleanup(func() { os.Remove(m[1]) })
	assert.Equal(t, 3000, strings.Count(string(full), "\n"))

	// byte limit: 1,000 lines of 100 bytes
	got, err = run(t, ct, "bash", map[string]any{"command": `for i in $(seq 1 1000); do printf '%099d\n' $i; done`})
	require.NoError(t, err)
	m = regexp.MustCompile(`\[Showing lines (\d+)-1000 of 1000\. Full output: (.+)\]$`).FindStringSubmatch(got)
	require.NotNil(t, m)
	t.Cleanup(func() { os.Remove(m[2]) })
	first, _ := strconv.Atoi(m[1])
	assert.Equal(t, fmt.Sprintf("%099d", first), got[:99])
	assert.LessOrEqual(t, len(got), 50*1024+200)
}

func TestBashMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB")
	}
	ct := newTools(t)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := run(t, ct, "bash", map[string]any{"command": "yes | head -c 100000000"})
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	m := regexp.MustCompile(`Output cut to its first 8\.0MB and last 8\.0MB of 95\.4MB: (.+)\]$`).FindStringSubmatch(got)
	require.NotNil(t, m, got[max(0, len(got)-200):])
	info, err := os.Stat(m[1])
	require.NoError(t, err)
	assert.LessOrEqual(t, info.Size(), int64(defaultSpillMaxBytes))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "allocated bytes")
}

func TestBashDisplay(t *testing.T) {
	t.Parallel()
	ct := newTools(t)
	res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "echo hi; exit 2"}})
	require.True(t, res.IsError)
	assert.Equal(t, "hi\n\nCommand exited with code 2", res.Content)
	p := payloadOf[ProcessPayload](t, res, DisplayProcess)
	assert.Equal(t, "echo hi; exit 2", p.Command)
	assert.Equal(t, 2, p.ExitCode)
	assert.Equal(t, "hi", p.Output)
	assert.Equal(t, int64(3), p.OutputBytes)
	assert.GreaterOrEqual(t, p.DurationMS, int64(0))
	assert.False(t, p.TimedOut)
	assert.Empty(t, p.OutputFile, "the output fits: no file")
	assert.False(t, p.OutputFileCut)
}

func TestBashBackgroundJobDoesNotHang(t *testing.T) {
	ct := newTools(t)
	began := time.Now()
	got, err := run(t, ct, "bash", map[string]any{"command": "sleep 1000 & echo left"})
	require.NoError(t, err)
	assert.Equal(t, "left", got)
	assert.Less(t, time.Since(began), 20*time.Second)
}

func BenchmarkBashOutputMemory(b *testing.B) {
	ct := newTools(b)
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := run(b, ct, "bash", map[string]any{"command": "yes | head -c 1G"})
		runtime.ReadMemStats(&after)
		require.NoError(b, err)
		if m := regexp.MustCompile(`: (/.+)\]$`).FindStringSubmatch(got); m != nil {
			os.Remove(m[1])
		}
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "MiB-allocated/op")
	}
}

// BenchmarkBashEcho measures the cost of one short call: starting the shell,
// and on Linux finding and killing what it left.
func BenchmarkBashEcho(b *testing.B) {
	ct := newTools(b)
	for b.Loop() {
		got, err := run(b, ct, "bash", map[string]any{"command": "echo hi"})
		require.NoError(b, err)
		require.Equal(b, "hi", got)
	}
}

// spillPathRE finds the spill file named in bash's answer.
var spillPathRE = regexp.MustCompile(`\[Showing lines \d+-\d+ of \d+\. (Full output|Output cut to its first \S+ and last \S+ of \S+): (/[^\]\n]+)\]`)

// A command that prints far more than the cap (40 MB of yes, then a failure,
// so the amount does not depend on the machine's speed as a timeout would)
// leaves a spill file no bigger than the cap, where the host says, and Close
// removes it.
func TestBashSpillCappedAndRemovedByClose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		dir   func(t *testing.T) string // "" is the system temp folder
		limit int64
	}{
		{"default folder and cap", func(*testing.T) string { return "" }, 0},
		{"host's folder, 1 MiB cap", func(t *testing.T) string { return filepath.Join(t.TempDir(), "spill") }, 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			ct, err := New(t.TempDir(), WithBashSpillDir(dir), WithBashSpillLimit(tt.limit))
			require.NoError(t, err)
			closed := false
			t.Cleanup(func() {
				if !closed {
					ct.Close()
				}
			})
			res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "yes | head -c 40000000; exit 3", "timeout": 120}})
			require.True(t, res.IsError)
			require.ErrorIs(t, res.Err, ErrCommandFailed)
			m := spillPathRE.FindStringSubmatch(res.Content)
			require.NotNil(t, m, res.Content[max(0, len(res.Content)-300):])
			assert.Contains(t, m[1], "Output cut to its first")
			path := m[2]
			if dir == "" {
				dir = os.TempDir()
			}
			assert.Equal(t, dir, filepath.Dir(path))
			limit := cmp.Or(tt.limit, defaultSpillMaxBytes)
			t.Cleanup(func() { os.Remove(path) })
			info, err := os.Stat(path)
			require.NoError(t, err)
			require.LessOrEqual(t, info.Size(), limit, "the spill file outgrew its cap")
			assert.Greater(t, info.Size(), limit/2)
			assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(data), "y\ny\ny\n"))
			assert.True(t, strings.Contains(string(data), " cut here: this file keeps the first "), "the marker")
			assert.True(t, strings.HasSuffix(string(data), "y\n"))
			p := payloadOf[ProcessPayload](t, res, DisplayProcess)
			assert.Equal(t, path, p.OutputFile)
			assert.True(t, p.OutputFileCut)
			assert.Greater(t, p.OutputBytes, limit, "the whole output's size")

			closed = true
			require.NoError(t, ct.Close())
			_, err = os.Stat(path)
			assert.ErrorIs(t, err, os.ErrNotExist, "Close must remove the spill file")
		})
	}
}

func TestBashSpillRetention(t *testing.T) {
	t.Parallel()
	ct := newTools(t, WithBashSpillDir(t.TempDir()), WithBashSpillRetention(500*time.Millisecond, 2))
	var paths []string
	for range 3 {
		got, err := run(t, ct, "bash", map[string]any{"command": "seq 1 3000"})
		require.NoError(t, err)
		m := spillPathRE.FindStringSubmatch(got)
		require.NotNil(t, m)
		assert.Equal(t, "Full output", m[1])
		paths = append(paths, m[2])
	}
	assert.NoFileExists(t, paths[0], "only the last 2 files are kept")
	for _, p := range paths[1:] {
		assert.Eventually(t, func() bool { _, err := os.Stat(p); return errors.Is(err, os.ErrNotExist) },
			20*time.Second, 20*time.Millisecond, "%s outlived its retention", p)
	}
}

func TestBashAfterClose(t *testing.T) {
	t.Parallel()
	ct, err := New(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, ct.Close())
	_, err = run(t, ct, "bash", map[string]any{"command": "echo hi"})
	require.ErrorIs(t, err, os.ErrClosed)
}

// A panic in any goroutine bash starts becomes the call's error, and the
// command's processes are still killed; so does a panic in the call itself.
func TestBashGoroutinePanics(t *testing.T) {
	stages := []string{"copy", "wait", "run"}
	if runtime.GOOS == "linux" {
		stages = append(stages, "watch")
	}
	for _, stage := range stages {
		t.Run(stage, func(t *testing.T) {
			ct := newTools(t, withoutContainment()) // reads host pids; "watch" is the scan's
			pidFile := filepath.Join(ct.Root(), "pid")
			bashTestHook = func(s string) {
				if s == stage {
					for i := 0; i < 500 && !fileHasLine(pidFile); i++ { // panic once the command runs
						time.Sleep(10 * time.Millisecond)
					}
					panic("boom in " + s)
				}
			}
			t.Cleanup(func() { bashTestHook = nil })
			done := make(chan llmtoolkit.Result, 1)
			go func() {
				done <- llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{
					"command": "echo $$ > pid; echo hi; sleep 30"}})
			}()
			var res llmtoolkit.Result
			select {
			case res = <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("bash did not return after a panic")
			}
			require.True(t, res.IsError)
			require.ErrorIs(t, res.Err, llmtoolkit.ErrToolPanic)
			assert.Contains(t, res.Content, "boom in "+stage)
			data, err := os.ReadFile(pidFile)
			require.NoError(t, err)
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			require.NoError(t, err)
			assert.Eventually(t, func() bool { return !groupAlive(pid) }, 10*time.Second, 20*time.Millisecond,
				"the command's processes are left")
		})
	}
}

// fileHasLine reports whether the file holds a complete line.
func fileHasLine(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && strings.HasSuffix(string(data), "\n")
}
