//go:build linux

package sandbox

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestBubblewrapNamespaceCost measures what bwrap's own user and PID
// namespace (a host not root) costs: `true` under bubblewrap (100 of each)
// and a session's start and close (30 of each), with and without it in
// turns so that both see the same load; prints the medians of the wall
// time and of the CPU time (user+sys of the host and of every process it
// reaped: as a subreaper, every process the command or session ran). As root bwrap runs in the helper's namespace instead: run it as
// another user. It runs only with LLMTOOLKIT_MEASURE=1: a measurement, not
// a check.
func TestBubblewrapNamespaceCost(t *testing.T) {
	if os.Getenv("LLMTOOLKIT_MEASURE") == "" {
		t.Skip("a measurement: set LLMTOOLKIT_MEASURE=1")
	}
	if os.Geteuid() == 0 {
		t.Skip("as root bwrap runs in the helper's namespace: run this as another user")
	}
	b, err := NewBubblewrap()
	require.NoError(t, err)
	if !b.ownNS {
		t.Skip("bwrap runs in no namespace of its own here")
	}
	p := policyFor(t, false)
	// Without bwrap's namespace, Close kills bwrap before it reaps the
	// server it killed first: the server would be reaped by init, its CPU
	// time counted nowhere. As a subreaper this process reaps it (every
	// process it started is waited for when cpu runs).
	require.NoError(t, unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
	cpu := func() time.Duration {
		for {
			var ws unix.WaitStatus
			if pid, _ := unix.Wait4(-1, &ws, unix.WNOHANG, nil); pid <= 0 {
				break
			}
		}
		var self, children unix.Rusage
		_ = unix.Getrusage(unix.RUSAGE_SELF, &self)
		_ = unix.Getrusage(unix.RUSAGE_CHILDREN, &children)
		return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
	}
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2].Round(10 * time.Microsecond)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("load %s", load)
	for _, tc := range []struct {
		name string
		runs int
		run  func(bw *Bubblewrap)
	}{
		{"a command (true)", 200, func(bw *Bubblewrap) {
			c, err := bw.Command(Spec{Path: "/bin/true", Dir: p.Root, Env: []string{"PATH=/usr/bin:/bin"}}, p)
			require.NoError(t, err)
			require.NoError(t, c.Run())
		}},
		{"a session's start and close", 60, func(bw *Bubblewrap) {
			s, err := NewSession(bw, p)
			require.NoError(t, err)
			require.NoError(t, s.Close())
		}},
	} {
		var wall, used [2][]time.Duration
		for i := range tc.runs {
			mode := i % 2 // 0: bwrap started directly (as before), 1: in its own namespaces
			began, cpu0 := time.Now(), cpu()
			tc.run(&Bubblewrap{path: b.path, ownNS: mode == 1})
			wall[mode] = append(wall[mode], time.Since(began))
			used[mode] = append(used[mode], cpu()-cpu0)
		}
		for mode, how := range []string{"bwrap directly", "bwrap in its own namespaces"} {
			t.Logf("%s, %-28s wall median %v, CPU median %v (%d runs)", tc.name, how, median(wall[mode]), median(used[mode]), len(wall[mode]))
		}
	}
}
