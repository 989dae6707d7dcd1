package jobs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/proc"
	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

func TestRingKeepsTheLatestBytes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		max    int
		writes []int
	}{
		{"fits", 16, []int{3, 4, 5}},
		{"wraps", 16, []int{10, 10, 10}},
		{"one write larger than the ring", 16, []int{40}},
		{"exact", 8, []int{8, 8}},
		{"many small", 7, []int{1, 2, 3, 4, 5, 6, 7, 8, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRing(tc.max)
			var all []byte
			for i, n := range tc.writes {
				p := bytes.Repeat([]byte{byte('a' + i)}, n)
				for k := range p {
					p[k] += byte(k % 3)
				}
				r.write(p)
				all = append(all, p...)
			}
			require.EqualValues(t, len(all), r.total)
			for off := int64(0); off <= int64(len(all)); off++ {
				data, dropped := r.since(off)
				first := int64(max(0, len(all)-tc.max))
				assert.Equal(t, max(0, first-off), dropped, "offset %d", off)
				assert.Equal(t, string(all[max(off, first):]), string(data), "offset %d", off)
			}
		})
	}
}

// command prepares script under the containment backend, as codetools
// does without a sandbox.
func command(t testing.TB, script string, tty bool) *sandbox.Cmd {
	t.Helper()
	b := sandbox.Contain()
	if ok, why := sandbox.Contains(); !ok || b == nil {
		t.Skipf("no PID namespace here: %s", why)
	}
	cmd, err := b.Command(sandbox.Spec{Path: "/bin/bash", Args: []string{"-c", script}, Dir: t.TempDir(),
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "TERM=xterm"}, TTY: tty}, sandbox.Policy{})
	require.NoError(t, err)
	return cmd
}

func newTestTable(t *testing.T, l Limits) *Table {
	t.Helper()
	var spills proc.SpillFiles
	dir := t.TempDir()
	tb := NewTable(l, Logs{
		Create: func() (*os.File, error) { return spills.Create(dir) },
		Keep:   func(path string) { spills.Keep(path, 0, 100) },
	}, nil)
	t.Cleanup(func() { tb.Close(); require.NoError(t, spills.Close()) })
	return tb
}

func TestJobReadsNewOutputThenItsEnd(t *testing.T) {
	tb := newTestTable(t, Limits{})
	j, err := tb.Start(Spec{Cmd: command(t, "echo first; read -t 5 x < /dev/zero; sleep 0.3; echo second; exit 3", false), Command: "test"})
	require.NoError(t, err)
	ctx := context.Background()
	c := j.Read(ctx, ReadOptions{Wait: 10 * time.Second})
	assert.Equal(t, "first\n", string(c.Data))
	assert.Equal(t, Running, c.Info.State)
	c = j.Read(ctx, ReadOptions{Wait: 10 * time.Second, UntilExit: true})
	assert.Equal(t, "second\n", string(c.Data))
	assert.Equal(t, Exited, c.Info.State)
	assert.Equal(t, 3, c.Info.ExitCode)
	c = j.Read(ctx, ReadOptions{})
	assert.Empty(t, c.Data, "what was read is not returned again")
	<-j.Done()
	log, err := os.ReadFile(j.Info().Log)
	require.NoError(t, err)
	assert.Equal(t, "first\nsecond\n", string(log), "the log holds the whole output")
}

// alive reports whether pid runs (a zombie is not running).
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// daemonScript forks a detached daemon (setsid, double fork) that writes
// its pid, as the host sees it, to file, then runs tail.
func daemonScript(file, tail string) string {
	// The namespace's pid is not the host's: find the daemon by a unique
	// argument from the host side instead.
	return fmt.Sprintf("setsid bash -c 'exec -a %s sleep 1000' </dev/null >/dev/null 2>&1 & %s", filepath.Base(file), tail)
}

// hostPid finds the host pid of the sleep whose argument is tag.
func hostPid(t *testing.T, tag string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			n, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if string(cmdline) == tag+"\x001000\x00" && alive(n) {
				pid = n
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond)
	return pid
}

func TestKillEndsTheDaemonAJobForked(t *testing.T) {
	tb := newTestTable(t, Limits{})
	tag := fmt.Sprintf("tag%d", time.Now().UnixNano())
	j, err := tb.Start(Spec{Cmd: command(t, daemonScript(tag, "sleep 1000"), false)})
	require.NoError(t, err)
	pid := hostPid(t, tag)
	j.Kill("stopped")
	<-j.Done()
	assert.False(t, alive(pid), "the daemon ended with its job")
	in := j.Info()
	assert.Equal(t, Killed, in.State)
	assert.Equal(t, "stopped", in.Reason)
}

func TestAJobEndsWithItsCommandAndTakesTheDaemon(t *testing.T) {
	tb := newTestTable(t, Limits{})
	tag := fmt.Sprintf("tag%d", time.Now().UnixNano())
	j, err := tb.Start(Spec{Cmd: command(t, daemonScript(tag, "sleep 0.5; echo done"), false)})
	require.NoError(t, err)
	pid := hostPid(t, tag)
	c := j.Read(context.Background(), ReadOptions{Wait: 20 * time.Second, UntilExit: true})
	assert.Equal(t, "done\n", string(c.Data))
	<-j.Done()
	assert.False(t, alive(pid))
}

func TestBoundsRefuseClearly(t *testing.T) {
	tb := newTestTable(t, Limits{MaxJobs: 2, MaxLifetime: 300 * time.Millisecond})
	a, err := tb.Start(Spec{Cmd: command(t, "sleep 1000", false)})
	require.NoError(t, err)
	_, err = tb.Start(Spec{Cmd: command(t, "sleep 1000", false)})
	require.NoError(t, err)
	done := false
	_, err = tb.Start(Spec{Cmd: command(t, "true", false), Done: func() { done = true }})
	require.ErrorIs(t, err, ErrTooManyJobs)
	assert.True(t, done, "Done runs when Start fails")
	<-a.Done()
	assert.Equal(t, Killed, a.Info().State)
	assert.Contains(t, a.Info().Reason, "lifetime of 300ms reached")
	// Ended jobs make room.
	_, err = tb.Start(Spec{Cmd: command(t, "true", false)})
	require.NoError(t, err)
	_, err = tb.Get(a.ID(), "")
	require.ErrorIs(t, err, ErrNoJob, "the oldest ended job was forgotten")
}

func TestOwnersSeeOnlyTheirJobs(t *testing.T) {
	tb := newTestTable(t, Limits{})
	j, err := tb.Start(Spec{Cmd: command(t, "true", false), Owner: "alice"})
	require.NoError(t, err)
	_, err = tb.Get(j.ID(), "bob")
	require.ErrorIs(t, err, ErrNoJob)
	got, err := tb.Get(j.ID(), "alice")
	require.NoError(t, err)
	assert.Same(t, j, got)
	assert.Empty(t, tb.List("bob"))
	assert.Len(t, tb.List("alice"), 1)
}

func TestCloseEndsEveryJob(t *testing.T) {
	tb := newTestTable(t, Limits{})
	tag := fmt.Sprintf("tag%d", time.Now().UnixNano())
	_, err := tb.Start(Spec{Cmd: command(t, daemonScript(tag, "sleep 1000"), false)})
	require.NoError(t, err)
	pid := hostPid(t, tag)
	tb.Close()
	assert.False(t, alive(pid))
	_, err = tb.Start(Spec{Cmd: command(t, "true", false)})
	require.ErrorIs(t, err, ErrClosed)
}

func TestMemoryStaysBoundedWhenReadLate(t *testing.T) {
	tb := newTestTable(t, Limits{RingBytes: 64 << 10, LogBytes: 1 << 20})
	j, err := tb.Start(Spec{Cmd: command(t, "head -c 10000000 /dev/zero | tr '\\0' x", false)})
	require.NoError(t, err)
	<-j.Done()
	c := j.Read(context.Background(), ReadOptions{})
	assert.Len(t, c.Data, 64<<10)
	assert.EqualValues(t, 10_000_000-64<<10, c.Dropped)
	in := j.Info()
	assert.True(t, in.LogCut)
	fi, err := os.Stat(in.Log)
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(1<<20))
}

func TestStdinPipe(t *testing.T) {
	tb := newTestTable(t, Limits{})
	j, err := tb.Start(Spec{Cmd: command(t, "read line; echo got:$line", false), Stdin: true})
	require.NoError(t, err)
	require.NoError(t, j.Write([]byte("hello\n")))
	c := j.Read(context.Background(), ReadOptions{Wait: 10 * time.Second, UntilExit: true})
	assert.Equal(t, "got:hello\n", string(c.Data))
	require.ErrorIs(t, j.Write([]byte("x")), ErrEnded)
	j2, err := tb.Start(Spec{Cmd: command(t, "true", false)})
	require.NoError(t, err)
	require.ErrorIs(t, j2.Write([]byte("x")), ErrNoInput)
}

// TestHostKilledLeavesNoJob starts a job from a child process (this test
// binary again), SIGKILLs that host and checks that the job's processes,
// a detached daemon among them, are gone.
func TestHostKilledLeavesNoJob(t *testing.T) {
	if tag := os.Getenv("LLMTOOLKIT_JOBS_HOST"); tag != "" {
		tb := NewTable(Limits{}, Logs{}, nil)
		for range 3 {
			if _, err := tb.Start(Spec{Cmd: command(t, daemonScript(tag, "sleep 1000"), false)}); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Println("started")
		time.Sleep(time.Hour)
		return
	}
	if ok, why := sandbox.Contains(); !ok {
		t.Skipf("no PID namespace here: %s", why)
	}
	tag := fmt.Sprintf("host%d", time.Now().UnixNano())
	host := exec.Command(os.Args[0], "-test.run=^TestHostKilledLeavesNoJob$")
	host.Env = append(os.Environ(), "LLMTOOLKIT_JOBS_HOST="+tag)
	out, err := host.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, host.Start())
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })
	buf := make([]byte, 7)
	_, err = out.Read(buf)
	require.NoError(t, err)
	pid := hostPid(t, tag)
	require.NoError(t, host.Process.Signal(syscall.SIGKILL))
	assert.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 20*time.Millisecond, "a job's daemon outlived its SIGKILLed host")
}

func TestPlainRemovesEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"plain\n":                          "plain\n",
		"\x1b[1;31mred\x1b[0m\r\n":         "red\n",
		"10%\r50%\r100%\r\ndone\n":         "100%\ndone\n",
		"\x1b]0;title\x07prompt$ ":         "prompt$ ",
		"a\r\nb\r\n":                       "a\nb\n",
		"\x1b[?2004h>>> \x1b[?2004l\r\n42": ">>> \n42",
	} {
		assert.Equal(t, want, Plain([]byte(in)), "%q", in)
	}
}

func TestTerminalJobGetsCtrlCAndShowsItsScreen(t *testing.T) {
	tb := newTestTable(t, Limits{})
	j, err := tb.Start(Spec{Cmd: command(t, "trap 'echo got-INT; exit 5' INT; printf '\\033[?1049h\\033[2J\\033[Htop line'; while :; do sleep 0.05; done", true), TTY: true, Cols: 40, Rows: 10})
	require.NoError(t, err)
	require.Eventually(t, func() bool { s, full := j.Screen(); return full && strings.Contains(s, "top line") }, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, j.Write([]byte{3}))
	c := j.Read(context.Background(), ReadOptions{Wait: 10 * time.Second, UntilExit: true})
	assert.Equal(t, Exited, c.Info.State)
	assert.Equal(t, 5, c.Info.ExitCode, "Ctrl-C reached the command in the terminal's foreground")
	s, _ := j.Screen()
	assert.Contains(t, s, "got-INT")
}

// TestSplitStderr: with Spec.SplitStderr a job's standard error is read
// apart (Chunk.Err), each stream in its order and in its own bounded ring;
// the log holds both, Info counts both, a Read wakes for either.
func TestSplitStderr(t *testing.T) {
	tb := newTestTable(t, Limits{RingBytes: 64 << 10})
	j, err := tb.Start(Spec{Cmd: command(t, "echo o1; echo e1 >&2; sleep 0.6; echo e2 >&2; sleep 0.4; echo o2; head -c 1000000 /dev/zero | tr '\\0' x >&2", false), SplitStderr: true})
	require.NoError(t, err)
	ctx := context.Background()
	c := j.Read(ctx, ReadOptions{Wait: 10 * time.Second, Settle: 200 * time.Millisecond})
	assert.Equal(t, "o1\n", string(c.Data))
	assert.Equal(t, "e1\n", string(c.Err))
	c = j.Read(ctx, ReadOptions{Wait: 10 * time.Second, Settle: time.Millisecond})
	assert.Empty(t, c.Data)
	assert.Equal(t, "e2\n", string(c.Err), "stderr alone wakes a Read")
	<-j.Done()
	c = j.Read(ctx, ReadOptions{})
	assert.Equal(t, "o2\n", string(c.Data))
	assert.Len(t, c.Err, 64<<10, "stderr's ring is bounded as the output's")
	assert.EqualValues(t, 1_000_000-64<<10, c.ErrDropped)
	in := j.Info()
	assert.EqualValues(t, len("o1\ne1\ne2\no2\n")+1_000_000, in.Total)
	assert.Zero(t, in.Unread)
	log, err := os.ReadFile(in.Log)
	require.NoError(t, err)
	// The sleeps order the first three lines; o2 and the x's that follow it
	// on the other pipe reach the log in the order their readers take them.
	for _, line := range []string{"o1\n", "e1\n", "e2\n"} {
		assert.Contains(t, string(log[:min(len(log), 64)]), line, "the log holds both streams")
	}
	assert.Contains(t, string(log), "o2\n", "the log holds both streams")

	// Without SplitStderr both streams share one pipe.
	j, err = tb.Start(Spec{Cmd: command(t, "echo o; echo e >&2", false)})
	require.NoError(t, err)
	<-j.Done()
	c = j.Read(ctx, ReadOptions{})
	assert.Equal(t, "o\ne\n", string(c.Data))
	assert.Nil(t, c.Err)
}
