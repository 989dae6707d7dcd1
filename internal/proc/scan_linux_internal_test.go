//go:build linux

package proc

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		want procStat
		ok   bool
	}{
		{"plain", "42 (sleep) S 1 40 41 0 -1 4194560 95 0 0 0 0 0 0 0 20 0 1 0 123456 2285568 128",
			procStat{pid: 42, ppid: 1, pgrp: 40, sid: 41, start: 123456, state: 'S'}, true},
		{"name with spaces and parens", "7 (a) b (c) Z 3 4 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
			procStat{pid: 7, ppid: 3, pgrp: 4, sid: 5, start: 99, state: 'Z'}, true},
		{"ends at starttime", "9 (x) R 2 3 4 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5\n",
			procStat{pid: 9, ppid: 2, pgrp: 3, sid: 4, start: 5, state: 'R'}, true},
		{"truncated", "7 (x) S 1 2 3", procStat{}, false},
		{"negative start", "7 (x) S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -99", procStat{}, false},
		{"no name", "7 x S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99", procStat{}, false},
		{"bad number", "7 (x) S one 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99", procStat{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pid, _ := strconv.Atoi(strings.Fields(tt.line)[0])
			got, ok := parseProcStat(pid, []byte(tt.line))
			require.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("42 (sleep) S 1 40 41 0 -1 4194560 95 0 0 0 0 0 0 0 20 0 1 0 123456 2285568 128"))
	f.Add([]byte("7 (a) b (c) Z 3 4 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0"))
	f.Add([]byte(")("))
	f.Fuzz(func(t *testing.T, line []byte) {
		st, ok := parseProcStat(7, line)
		if ok {
			assert.Equal(t, 7, st.pid)
			assert.Contains(t, string(line), ")")
		} else {
			assert.Equal(t, procStat{}, st)
		}
	})
}

func TestReadProcStatSelf(t *testing.T) {
	st, ok := readProcStat(os.Getpid())
	require.True(t, ok)
	assert.Equal(t, os.Getppid(), st.ppid)
	assert.Equal(t, syscall.Getpgrp(), st.pgrp)
	assert.NotZero(t, st.start)
	assert.Contains(t, "RSD", string(st.state))
	assert.NotEqual(t, "?", procName(os.Getpid()))

	_, ok = readProcStat(1 << 30) // above any pid_max
	assert.False(t, ok)
}

// BenchmarkProcScan measures one full scan of /proc, what every bash call
// pays when its command ends.
func BenchmarkProcScan(b *testing.B) {
	cmd := exec.Command("sleep", "30")
	r, w, err := os.Pipe()
	require.NoError(b, err)
	defer r.Close()
	cmd.Stdout = w
	g := newProcGuard(cmd, w, NewTrap("bench", nil))
	require.NoError(b, cmd.Start())
	w.Close()
	g.Started()
	defer func() { g.KillAll(); g.Reap() }()
	b.ReportAllocs()
	for b.Loop() {
		procs, _, err := g.scan(true)
		require.NoError(b, err)
		require.Len(b, procs, 1)
	}
}

func TestListPids(t *testing.T) {
	var buf [512]byte // small: several getdents calls
	pids, err := listPids(buf[:], nil)
	require.NoError(t, err)
	assert.Contains(t, pids, os.Getpid())
	assert.Contains(t, pids, 1)
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	numeric := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			numeric++
		}
	}
	assert.InDelta(t, numeric, len(pids), 50, "processes come and go, but not that many")
	for _, pid := range pids {
		require.Positive(t, pid)
	}
}

// A process whose environment reads empty (as one in the middle of an exec
// does: the nohup daemon that became sleep under load) makes the scan
// unsure, and KillAll looks again for procUnsureWait before it says none
// is left; a process that is not the call's is still not killed.
func TestScanUnsureOfAnEmptyEnvironment(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd.Stdout = w
	g := newProcGuard(cmd, w, NewTrap("test", nil))
	require.NoError(t, cmd.Start())
	w.Close()
	g.Started()
	other := exec.Command("env", "-i", "/bin/sleep", "30") // not the call's: started by the host, no token
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	require.Eventually(t, func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(other.Process.Pid) + "/cmdline")
		return err == nil && strings.HasPrefix(string(b), "/bin/sleep")
	}, 5*time.Second, 5*time.Millisecond)

	procs, unsure, err := g.scan(true)
	require.NoError(t, err)
	require.Len(t, procs, 1, "the call's shell alone")
	assert.Equal(t, cmd.Process.Pid, procs[0].pid)
	assert.True(t, unsure, "an empty environment may be an exec under way")

	began := time.Now()
	assert.Empty(t, g.KillAll())
	assert.GreaterOrEqual(t, time.Since(began), procUnsureWait, "KillAll looked again while unsure")
	assert.Less(t, time.Since(began), procKillWait)
	_ = g.Reap()
	assert.NoError(t, other.Process.Signal(syscall.Signal(0)), "the host's own process was left alone")
}
