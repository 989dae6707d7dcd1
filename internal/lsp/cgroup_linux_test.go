package lsp

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serverAndChild waits for the stubborn fake server's child and returns
// the server's pid and its child's.
func serverAndChild(t *testing.T, m *Manager) (int, int) {
	t.Helper()
	var pid, child int
	require.Eventually(t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, e := range m.servers {
			if e.cur != nil && e.cur.cmd.Process != nil {
				pid = e.cur.cmd.Process.Pid
				if mm := regexp.MustCompile(`child (\d+)`).FindStringSubmatch(e.cur.stderr.String()); mm != nil {
					child, _ = strconv.Atoi(mm[1])
				}
			}
		}
		return pid > 0 && child > 0
	}, 10*time.Second, 20*time.Millisecond)
	return pid, child
}

// memoryCgroupOf is the folder of pid's memory cgroup.
func memoryCgroupOf(t *testing.T, pid int) string {
	t.Helper()
	own, err := ownCgroups("/proc/" + strconv.Itoa(pid) + "/cgroup")
	require.NoError(t, err)
	mounts, err := cgroupMounts()
	require.NoError(t, err)
	if p, ok := own["memory"]; ok {
		if m, ok := mounts["memory"]; ok {
			return m.join(p)
		}
	}
	return mounts["2"].join(own["2"])
}

// addressLimit is the "Max address space" line of pid's limits.
func addressLimit(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "Max address space") {
			return strings.Join(strings.Fields(line)[3:], " ")
		}
	}
	t.Fatal("no address space line")
	return ""
}

// TestMemoryLimitIsOneCgroup: where this process may make a memory
// cgroup, MemoryLimit puts the server and what it starts in one cgroup
// of their own whose limit is MemoryLimit (their sum is bounded, not
// each one's address space), and the cgroup goes at Close.
func TestMemoryLimitIsOneCgroup(t *testing.T) {
	const limit = 256 << 20
	probe, err := newMemoryCgroup("probe", limit)
	if errors.Is(err, errNoMemoryCgroup) {
		t.Skipf("no memory cgroup here: %v", err)
	}
	require.NoError(t, err)
	probe.remove()

	m, abs := newFake(t, "stubborn", Options{MemoryLimit: limit, ShutdownTimeout: 300 * time.Millisecond})
	rep, _ := diagnose(t, m, abs, "BAD\n", 20*time.Second)
	require.True(t, rep.Fresh, rep.Note)
	pid, child := serverAndChild(t, m)
	dir := memoryCgroupOf(t, pid)
	assert.Contains(t, filepath.Base(dir), "llmtoolkit-lsp-", "the server is not in a cgroup of its own")
	assert.Equal(t, dir, memoryCgroupOf(t, child), "the server's child is not in its cgroup")
	v, err := os.ReadFile(filepath.Join(dir, "memory.max"))
	if err != nil {
		v, err = os.ReadFile(filepath.Join(dir, "memory.limit_in_bytes"))
	}
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(limit), strings.TrimSpace(string(v)))
	assert.Equal(t, "unlimited unlimited bytes", addressLimit(t, pid), "RLIMIT_AS set beside the cgroup")
	require.NoError(t, m.Close())
	require.Eventually(t, func() bool {
		_, err := os.Stat(dir)
		return errors.Is(err, os.ErrNotExist)
	}, 5*time.Second, 20*time.Millisecond, "the server's cgroup outlived it")
}

// TestMemoryLimitFallsBackToRlimit: where no memory cgroup can be made,
// MemoryLimit caps each process's address space (RLIMIT_AS), and one
// line says so, once for every server of the manager.
func TestMemoryLimitFallsBackToRlimit(t *testing.T) {
	saved := newCgroup
	newCgroup = func(string, uint64) (*memoryCgroup, error) { return nil, errNoMemoryCgroup }
	t.Cleanup(func() { newCgroup = saved })
	const limit = 3 << 30
	var logs bytes.Buffer
	dir := t.TempDir()
	m := New(dir, []Spec{fakeSpec(t, "stubborn"), func() Spec { s := fakeSpec(t, "ok"); s.Languages = map[string]string{".other": "other"}; return s }()},
		Options{MemoryLimit: limit, ShutdownTimeout: 300 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	t.Cleanup(func() { _ = m.Close() })
	for _, name := range []string{"a.fake", "b.other"} {
		rep, _ := diagnose(t, m, filepath.Join(dir, name), "BAD\n", 20*time.Second)
		require.True(t, rep.Fresh, rep.Note)
	}
	pid, child := serverAndChild(t, m)
	assert.Equal(t, "3221225472 3221225472 bytes", addressLimit(t, pid))
	assert.Equal(t, "3221225472 3221225472 bytes", addressLimit(t, child))
	assert.Equal(t, 1, strings.Count(logs.String(), "lsp: no memory cgroup for"), logs.String())
}

// TestStaleCgroupsAreSwept: a server cgroup left by a process that died
// (its pid names no process) is removed when the next one is made; one
// of a process still running is kept.
func TestStaleCgroupsAreSwept(t *testing.T) {
	probe, err := newMemoryCgroup("probe", 64<<20)
	if errors.Is(err, errNoMemoryCgroup) {
		t.Skipf("no memory cgroup here: %v", err)
	}
	require.NoError(t, err)
	parent := filepath.Dir(probe.dir)
	probe.remove()
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	stale := filepath.Join(parent, fmt.Sprintf("llmtoolkit-lsp-%d-1-gopls", dead.Process.Pid))
	alive := filepath.Join(parent, fmt.Sprintf("llmtoolkit-lsp-%d-1-gopls", os.Getppid()))
	for _, d := range []string{stale, alive} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	t.Cleanup(func() { _ = os.Remove(alive); _ = os.Remove(stale) })
	g, err := newMemoryCgroup("next", 64<<20)
	require.NoError(t, err)
	g.remove()
	assert.NoDirExists(t, stale, "a dead process's cgroup was kept")
	assert.DirExists(t, alive, "a running process's cgroup was removed")
}
