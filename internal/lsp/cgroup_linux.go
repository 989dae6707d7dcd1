package lsp

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// errNoMemoryCgroup: no memory cgroup can be made below this process's
// own (no memory controller mounted, or not one this process may divide).
var errNoMemoryCgroup = errors.New("lsp: no memory cgroup can be made here")

// memoryCgroup is the memory cgroup one server runs in: its limit bounds
// the memory of the server and of every process it starts, together.
type memoryCgroup struct {
	dir  string // the cgroup's folder
	v2   bool
	back string // v1: the tasks file of the starting thread's own cgroup
}

var cgroupSeq atomic.Uint64

// newMemoryCgroup makes a memory cgroup named for name below this
// process's own, limited to bytes: memory.max (and no swap) under cgroup
// v2, when this process's cgroup may enable the memory controller for its
// children; else memory.limit_in_bytes under a v1 memory hierarchy.
func newMemoryCgroup(name string, bytes uint64) (*memoryCgroup, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	own, err := ownCgroups("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	leaf := fmt.Sprintf("llmtoolkit-lsp-%d-%d-%s", os.Getpid(), cgroupSeq.Add(1), strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == '\n' {
			return '_'
		}
		return r
	}, name))
	limit := strconv.FormatUint(bytes, 10)
	var why []string
	if m, ok := mounts["2"]; ok {
		if p, ok := own["2"]; ok {
			parent := m.join(p)
			sweepCgroups(parent)
			g, err := makeV2(parent, leaf, limit)
			if err == nil {
				return g, nil
			}
			why = append(why, "cgroup v2: "+err.Error())
		}
	}
	if m, ok := mounts["memory"]; ok {
		if p, ok := own["memory"]; ok {
			parent := m.join(p)
			sweepCgroups(parent)
			dir := filepath.Join(parent, leaf)
			if err := os.Mkdir(dir, 0o755); err != nil {
				return nil, fmt.Errorf("%w: cgroup v1: %w", errNoMemoryCgroup, err)
			}
			if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(limit), 0); err != nil {
				_ = os.Remove(dir)
				return nil, fmt.Errorf("%w: cgroup v1: %w", errNoMemoryCgroup, err)
			}
			return &memoryCgroup{dir: dir, back: m.mnt}, nil
		}
	}
	if len(why) == 0 {
		why = append(why, "no memory controller is mounted for this process")
	}
	return nil, fmt.Errorf("%w: %s", errNoMemoryCgroup, strings.Join(why, "; "))
}

// makeV2 makes leaf below parent with memory.max limit, enabling the
// memory controller for parent's children when it is not yet (which the
// kernel refuses while parent holds processes: then a host must delegate
// a cgroup whose processes sit in a leaf of their own).
func makeV2(parent, leaf, limit string) (*memoryCgroup, error) {
	ctl, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return nil, err
	}
	if !slices.Contains(strings.Fields(string(ctl)), "memory") {
		avail, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(strings.Fields(string(avail)), "memory") {
			return nil, errors.New("the memory controller is not available to this process's cgroup")
		}
		if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
			return nil, fmt.Errorf("enabling the memory controller below this process's cgroup: %w", err)
		}
	}
	dir := filepath.Join(parent, leaf)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	for file, v := range map[string]string{"memory.max": limit, "memory.swap.max": "0"} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0); err != nil && file == "memory.max" {
			_ = os.Remove(dir)
			return nil, err
		}
	}
	return &memoryCgroup{dir: dir, v2: true}, nil
}

// start starts cmd inside g, so that every process it forks is in g from
// its first instruction: cgroup v2 clones it there (CLONE_INTO_CGROUP);
// under v1 the thread that forks it is moved into g for the fork and back
// after (a v1 cgroup holds threads; a fork's child joins its thread's).
func (g *memoryCgroup) start(cmd *exec.Cmd) error {
	if g.v2 {
		fd, err := unix.Open(g.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		return cmd.Start()
	}
	// guard.Go: a panic is an error of this start, never a hang.
	return <-guard.Go("lsp: start in a memory cgroup", func() error {
		// Left locked when it could not go back: the thread then ends
		// with the goroutine, and a server started with Pdeathsig (its
		// parent thread's death) with it, rather than a thread of this
		// process staying in the server's cgroup.
		runtime.LockOSThread()
		tid := []byte(strconv.Itoa(unix.Gettid()))
		back, err := threadCgroup(g.back)
		if err != nil {
			runtime.UnlockOSThread()
			return err
		}
		if err := os.WriteFile(filepath.Join(g.dir, "tasks"), tid, 0); err != nil {
			runtime.UnlockOSThread()
			return err
		}
		err = cmd.Start()
		if os.WriteFile(filepath.Join(back, "tasks"), tid, 0) == nil {
			runtime.UnlockOSThread()
		}
		return err
	}, nil)
}

// threadCgroup is the folder of the calling thread's v1 memory cgroup,
// under the hierarchy mounted at mnt.
func threadCgroup(mnt string) (string, error) {
	own, err := ownCgroups("/proc/thread-self/cgroup")
	if err != nil {
		return "", err
	}
	p, ok := own["memory"]
	if !ok {
		return "", errors.New("the thread is in no memory cgroup")
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return "", err
	}
	m := mounts["memory"]
	if m.mnt != mnt {
		return "", errors.New("the memory hierarchy moved")
	}
	return m.join(p), nil
}

// remove removes g once its processes have ended (the kernel may take a
// moment to release them after they are reaped).
func (g *memoryCgroup) remove() {
	for range 50 {
		if err := os.Remove(g.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sweepCgroups removes the servers' cgroups in parent that a process no
// longer running made (one that died before it could remove them): the
// kernel removes only those no process is in.
func sweepCgroups(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "llmtoolkit-lsp-")
		if !ok || !e.IsDir() {
			continue
		}
		num, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(num)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
			_ = os.Remove(filepath.Join(parent, e.Name()))
		}
	}
}

// cgroupMount is where a cgroup hierarchy is mounted and which of its
// folders the mount shows at its top.
type cgroupMount struct{ mnt, root string }

// join is the folder of cgroup path p (as /proc/PID/cgroup names it).
func (m cgroupMount) join(p string) string {
	rel := strings.TrimPrefix(p, m.root)
	return filepath.Join(m.mnt, filepath.FromSlash(rel))
}

// cgroupMounts reads /proc/self/mountinfo for the cgroup v2 mount (key
// "2") and the v1 memory hierarchy's (key "memory").
func cgroupMounts() (map[string]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]cgroupMount{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 5 || len(fields) < sep+4 {
			continue
		}
		m := cgroupMount{mnt: unescapeMount(fields[4]), root: unescapeMount(fields[3])}
		switch fields[sep+1] {
		case "cgroup2":
			if _, ok := out["2"]; !ok {
				out["2"] = m
			}
		case "cgroup":
			if slices.Contains(strings.Split(fields[sep+3], ","), "memory") {
				if _, ok := out["memory"]; !ok {
					out["memory"] = m
				}
			}
		}
	}
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroups reads a /proc cgroup file: the v2 path (key "2") and the v1
// memory hierarchy's (key "memory").
func ownCgroups(file string) (map[string]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		id, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		ctls, p, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		switch {
		case id == "0" && ctls == "":
			out["2"] = p
		case slices.Contains(strings.Split(ctls, ","), "memory"):
			out["memory"] = p
		}
	}
	return out, nil
}
