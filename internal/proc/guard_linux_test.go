//go:build linux

package proc_test

import (
	"log/slog"
	"os"
	"os/exec"
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

// The scan guard ends a background process that left the command's
// session, and reports the shell's exit status.
func TestGuardScanKillsDetachedProcess(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd := exec.Command("sh", "-c", "setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!; exit 3")
	cmd.Stdout = w
	trap := proc.NewTrap("test", nil)
	g := proc.NewGuard(&sandbox.Cmd{Cmd: cmd}, w, trap)
	require.NoError(t, cmd.Start())
	w.Close()
	g.Started()
	line := make([]byte, 32)
	n, err := r.Read(line)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
	require.NoError(t, err)
	st, ok := proc.ReadStat(pid)
	require.True(t, ok)
	t.Cleanup(func() {
		if now, ok := proc.ReadStat(pid); ok && now.Start == st.Start {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	g.WaitExited()
	assert.Empty(t, g.KillAll())
	assert.Equal(t, 3, proc.ExitCode(g.Reap()))
	assert.Eventually(t, func() bool {
		now, ok := proc.ReadStat(pid)
		return !ok || now.Start != st.Start || now.State == 'Z'
	}, 5*time.Second, 10*time.Millisecond, "the detached sleeper outlived the call")
	assert.NoError(t, trap.Err())
}

// A panic in a trapped goroutine becomes the call's error and closes
// Failed; finally still runs.
func TestTrapPanic(t *testing.T) {
	old := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler))
	t.Cleanup(func() { slog.SetDefault(old) })
	trap := proc.NewTrap("bash", nil)
	done := make(chan struct{})
	trap.Go("reader", func() { panic("boom") }, func() { close(done) })
	<-done
	<-trap.Failed()
	require.Error(t, trap.Err())
	assert.Equal(t, "bash: reader: panic: boom", trap.Err().Error())
}
