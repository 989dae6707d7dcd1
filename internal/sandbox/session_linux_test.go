//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
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
			assert.Equal(t, "1\n", out, "the command is the init of its own PID namespace")
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
