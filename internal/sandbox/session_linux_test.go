//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sessionBackend runs every policy's commands in a Session of inner made
// for that policy (one per policy, closed with the test): the existing
// tests, given it by backends, run in session mode.
type sessionBackend struct {
	t     *testing.T
	inner Backend
	mu    sync.Mutex
	made  map[string]*Session
}

func (b *sessionBackend) Name() string { return b.inner.Name() + "/session" }

func (b *sessionBackend) Command(spec Spec, p Policy) (*Cmd, error) {
	if p.Mode == Off {
		return b.inner.Command(spec, p)
	}
	key := strings.Join(append([]string{p.Mode.String(), p.Root, p.Tmp, strings.Join(p.Readable, ":")}, boolString(p.Network)), "|")
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.made[key]
	if s == nil {
		var err error
		if s, err = NewSession(b.inner, p); err != nil {
			return nil, err
		}
		b.made[key] = s
		b.t.Cleanup(func() { _ = s.Close() })
	}
	return s.Command(spec, p)
}

func boolString(v bool) string {
	if v {
		return "true"
	}
	return "false"
}

// sessionBackends returns the session form of every backend that serves
// one here.
func sessionBackends(t *testing.T) map[string]Backend {
	t.Helper()
	out := map[string]Backend{}
	if b, err := NewLandlock(); err == nil {
		out["landlock/session"] = &sessionBackend{t: t, inner: b, made: map[string]*Session{}}
	}
	if b, err := NewBubblewrap(); err == nil {
		out["bubblewrap/session"] = &sessionBackend{t: t, inner: b, made: map[string]*Session{}}
	}
	if len(out) == 0 {
		t.Skip("no backend serves a session here")
	}
	return out
}

func TestSessionRunsCommands(t *testing.T) {
	for name, b := range sessionBackends(t) {
		t.Run(name, func(t *testing.T) {
			p := Policy{Mode: WorkspaceWrite, Root: t.TempDir(), Tmp: t.TempDir()}
			out, err := run(t, b, p, "echo hi; id -u")
			require.NoError(t, err, out)
			assert.True(t, strings.HasPrefix(out, "hi\n"), out)
			if os.Geteuid() == 0 {
				assert.Equal(t, "hi\n65534\n", out)
			}
			_, err = run(t, b, p, "exit 3")
			var ee *ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, 3, ee.ExitCode())
			out, err = run(t, b, p, "echo $$")
			require.NoError(t, err)
			assert.Equal(t, "2\n", out, "the command is pid 2 of its own PID namespace, under its reaper")
			var ds []time.Duration
			shell, _ := exec.LookPath("bash")
			for range 50 {
				start := time.Now()
				c, err := b.Command(Spec{Path: shell, Args: []string{"-c", "echo hi"}, Dir: p.Root}, p)
				require.NoError(t, err)
				require.NoError(t, c.Start())
				require.NoError(t, c.Wait())
				ds = append(ds, time.Since(start))
			}
			slices.Sort(ds)
			t.Logf("echo hi in the session, median of 50: %v", ds[25])
		})
	}
}

// TestSessionCommandCannotReachTheServersMemory: the processes a command
// sees but did not start (the session's server, its own reaper, which on
// amd64 shares the server's memory: reaper_linux_amd64.go) are closed to
// it: /proc/pid/mem (the check ptrace's attach makes) refuses it, while its
// init still takes its signals.
func TestSessionCommandCannotReachTheServersMemory(t *testing.T) {
	for name, b := range sessionBackends(t) {
		t.Run(name, func(t *testing.T) {
			p := Policy{Mode: WorkspaceWrite, Root: t.TempDir(), Tmp: t.TempDir()}
			out, err := run(t, b, p, `n=0
for d in /proc/[0-9]*; do
	read -r comm < "$d/comm" 2>/dev/null || continue
	case $comm in bash|cat) continue;; esac # the command's own
	n=$((n+1))
	if (exec 3<>"$d/mem") 2>/dev/null || (exec 3<"$d/mem") 2>/dev/null; then echo "opened $d/mem ($comm)"; fi
done
echo "checked $n"
kill -0 1 && echo "init signalled"`)
			require.NoError(t, err, out)
			assert.NotContains(t, out, "opened")
			assert.Contains(t, out, "init signalled")
			var n int
			_, err = fmt.Sscanf(out[strings.Index(out, "checked "):], "checked %d", &n)
			require.NoError(t, err, out)
			assert.GreaterOrEqual(t, n, 2, "at least the server and the reaper: %s", out)
			if os.Geteuid() != 0 || !strings.HasPrefix(name, "landlock") || runtime.GOARCH != "amd64" {
				return // the commands run as the server's user (the memory stays not dumpable), or the reaper's memory is a copy
			}
			// Under a root host, whatever fs.suid_dumpable makes of the
			// memory, no process of nobody may trace the reaper: its
			// effective and saved users are root (its real one nobody).
			out, err = run(t, b, p, `n=$(awk '/^NSpid/ {print NF}' /proc/self/status)
for d in /proc/[0-9]*; do awk -v n="$n" '/^NSpid/ && NF == n && $NF == 1 {r = 1} /^Uid/ {u = $2 " " $3 " " $4} END {if (r) print "reaper uids " u}' "$d/status"; done`)
			require.NoError(t, err, out)
			assert.Equal(t, "reaper uids 65534 0 0\n", out)
		})
	}
}

// deepestChild returns the deepest descendant of pid (pid itself when it
// has none): a session's server when it runs no command.
func deepestChild(t *testing.T, pid int) int {
	t.Helper()
	for {
		kids, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
		require.NoError(t, err)
		f := strings.Fields(string(kids))
		if len(f) == 0 {
			return pid
		}
		pid, err = strconv.Atoi(f[0])
		require.NoError(t, err)
	}
}

func TestSessionStartsANewServerWhenItsServerDies(t *testing.T) {
	raw := map[string]func() (Backend, error){
		"landlock":   func() (Backend, error) { return NewLandlock() },
		"bubblewrap": func() (Backend, error) { return NewBubblewrap() },
	}
	ran := false
	for name, mk := range raw {
		t.Run(name, func(t *testing.T) {
			b, err := mk()
			if err != nil {
				t.Skip(err)
			}
			ran = true
			p := Policy{Mode: WorkspaceWrite, Root: t.TempDir(), Tmp: t.TempDir()}
			s, err := NewSession(b, p)
			require.NoError(t, err)
			defer s.Close()
			sb := &sessionBackend{t: t, inner: b, made: map[string]*Session{}}
			sb.made[strings.Join([]string{p.Mode.String(), p.Root, p.Tmp, "", "false"}, "|")] = s
			for i := range maxRestarts + 1 {
				out, err := run(t, sb, p, "echo hi")
				require.NoError(t, err, "command %d: %s", i, out)
				require.Equal(t, "hi\n", out)
				// A long command, then its server SIGKILLed.
				s.mu.Lock()
				server := deepestChild(t, s.cur.cmd.Process.Pid)
				s.mu.Unlock()
				c, err := s.Command(Spec{Path: "/bin/sleep", Args: []string{"61.25"}, Dir: p.Root}, p)
				require.NoError(t, err)
				require.NoError(t, c.Start())
				require.Eventually(t, func() bool { return sleeping("61.25") }, 5*time.Second, 10*time.Millisecond)
				require.NoError(t, syscall.Kill(server, syscall.SIGKILL))
				done := make(chan error, 1)
				go func() { done <- c.Wait() }()
				select {
				case err = <-done:
				case <-time.After(20 * time.Second):
					t.Fatal("the command of a dead server did not end")
				}
				require.ErrorIs(t, err, ErrServerLost, "the command is lost with its server")
				require.ErrorIs(t, err, ErrSessionClosed)
				assert.Eventually(t, func() bool { return !sleeping("61.25") }, 5*time.Second, 20*time.Millisecond,
					"the lost command's processes are gone")
			}
			// Past maxRestarts within a minute: a clear error, no new server.
			_, err = s.Command(Spec{Path: "/bin/true", Dir: p.Root}, p)
			require.ErrorIs(t, err, ErrServerLost)
			assert.Contains(t, err.Error(), "not any more")
			require.NoError(t, s.Close())
			_, err = s.Command(Spec{Path: "/bin/true", Dir: p.Root}, p)
			require.ErrorIs(t, err, ErrSessionClosed)
			assert.NotErrorIs(t, err, ErrServerLost)
		})
	}
	if !ran {
		t.Skip("no backend serves a session here")
	}
}

// sleeping reports whether a process runs sleep with arg.
func sleeping(arg string) bool {
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		b, err := os.ReadFile("/proc/" + p.Name() + "/cmdline")
		if err == nil && string(b) == "/bin/sleep\x00"+arg+"\x00" {
			return true
		}
	}
	return false
}
