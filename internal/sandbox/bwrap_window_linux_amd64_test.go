package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// windowHostEnv makes TestBubblewrapWindowHost a host that starts one
// command under bubblewrap (the value "bubblewrap/session": a session's
// server, made as startServer makes it) with bwrap traced, lets bwrap run
// up to its window and SIGKILLs itself there; windowHostEnv+"_DIRS" holds
// its root and temporary folder, separated by a colon.
const windowHostEnv = hostChildEnv + "_WINDOW"

// TestBubblewrapWindowHost is the host of
// TestBubblewrapDiesWithHostInItsWindow (it does nothing in a plain run).
//
// bwrap's window, when the host is not root: after its clone, bwrap arms
// its own parent-death signal (--die-with-parent), then writes the event
// its child waits for before it goes on (to arm its own, and exec the
// sandbox's init, which finds a host already gone). A host that dies
// between the two kills bwrap by that signal before the write, and the
// child waits forever. The host stops bwrap at the entry of that write
// (ptrace: after its clone and its prctl(PR_SET_PDEATHSIG), the first
// 8-byte write) and dies there.
func TestBubblewrapWindowHost(t *testing.T) {
	name := os.Getenv(windowHostEnv)
	if name == "" {
		t.Skip("the host of TestBubblewrapDiesWithHostInItsWindow")
	}
	marker := os.Getenv(hostChildEnv + "_MARKER")
	root, tmp, _ := strings.Cut(os.Getenv(windowHostEnv+"_DIRS"), ":")
	runtime.LockOSThread() // the tracer is the thread that started bwrap
	b, err := NewBubblewrap()
	require.NoError(t, err)
	p := Policy{Mode: WorkspaceWrite, Root: root, Tmp: tmp}
	var c *Cmd
	if strings.HasSuffix(name, "/session") {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		c, err = b.command(Spec{Path: "server", Dir: root, Env: []string{"PATH=/usr/bin:/bin", "MARKER=" + marker}}, p, os.NewFile(uintptr(fds[1]), "session-server"))
		require.NoError(t, err)
	} else {
		c, err = b.Command(Spec{Path: "/bin/sh", Args: []string{"-c", "sleep " + marker}, Dir: root, Env: []string{"PATH=/usr/bin:/bin"}}, p)
		require.NoError(t, err)
	}
	c.SysProcAttr.Ptrace = true
	require.NoError(t, c.Start())
	pid := c.Process.Pid
	var ws unix.WaitStatus
	_, err = unix.Wait4(pid, &ws, 0, nil) // the stop after its exec
	require.NoError(t, err)
	require.True(t, ws.Stopped(), "bwrap did not stop after its exec: %v", ws)
	require.NoError(t, unix.PtraceSetOptions(pid, unix.PTRACE_O_TRACESYSGOOD))
	cloned, armed, entering, sig := false, false, true, 0
	for {
		require.NoError(t, unix.PtraceSyscall(pid, sig))
		_, err := unix.Wait4(pid, &ws, 0, nil)
		require.NoError(t, err)
		require.True(t, ws.Stopped(), "bwrap ended before its window: %v", ws)
		if sig = 0; ws.StopSignal() != syscall.SIGTRAP|0x80 { // a signal for bwrap: pass it on
			sig = int(ws.StopSignal())
			continue
		}
		var regs unix.PtraceRegs
		require.NoError(t, unix.PtraceGetRegs(pid, &regs))
		switch {
		case !entering && (regs.Orig_rax == unix.SYS_CLONE || regs.Orig_rax == unix.SYS_CLONE3) && int64(regs.Rax) > 0:
			cloned = true
		case entering && cloned && regs.Orig_rax == unix.SYS_PRCTL && regs.Rdi == unix.PR_SET_PDEATHSIG:
			armed = true
		case entering && armed && regs.Orig_rax == unix.SYS_WRITE && regs.Rdx == 8:
			fmt.Println("in the window")
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute)
		}
		entering = !entering
	}
}

// A host SIGKILLed in bwrap's window (see TestBubblewrapWindowHost), a
// command's bwrap or a session server's, leaves nothing behind: bwrap's
// child is in the PID namespace that dies with the host. As root bwrap
// starts from the helper's bwrap stage (its own namespace since 3926233),
// which this tracer does not follow: TestSandboxUnprivileged runs this as
// nobody.
func TestBubblewrapDiesWithHostInItsWindow(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("as root bwrap starts from the helper's bwrap stage: TestSandboxUnprivileged runs this as nobody")
	}
	if _, err := NewBubblewrap(); err != nil {
		t.Skipf("bubblewrap does not run here: %v", err)
	}
	for _, name := range []string{"bubblewrap", "bubblewrap/session"} {
		t.Run(name, func(t *testing.T) {
			for round := range 3 {
				marker := fmt.Sprintf("300.%d", time.Now().UnixNano())
				root := filepath.Join(t.TempDir(), "root-"+marker)
				require.NoError(t, os.Mkdir(root, 0o755))
				host := exec.Command(os.Args[0], "-test.run=^TestBubblewrapWindowHost$", "-test.count=1")
				host.Env = append(os.Environ(), windowHostEnv+"="+name, hostChildEnv+"_MARKER="+marker, windowHostEnv+"_DIRS="+root+":"+t.TempDir())
				var stderr strings.Builder
				host.Stderr = &stderr
				out, err := host.StdoutPipe()
				require.NoError(t, err)
				require.NoError(t, host.Start())
				line, _ := bufio.NewReader(out).ReadString('\n')
				_ = host.Wait()
				t.Cleanup(func() { killMarked(marker) })
				require.Equal(t, "in the window\n", line, "the host did not reach bwrap's window: %s", stderr.String())
				if left := waitGone(marker, 3*time.Second); len(left) > 0 {
					assert.Failf(t, "bwrap's child outlived its host", "round %d: %s", round+1, describe(left))
				}
			}
		})
	}
}
