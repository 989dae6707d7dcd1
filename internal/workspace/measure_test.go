package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMeasureWorkspaces times making and removing a workspace of each
// mode on the repository LLMTOOLKIT_WORKSPACE_REPO names (bench/workspace.sh
// sets it: a git repository holding the Go source tree), ROUNDS times,
// each round timing in turn `git worktree add`/`git worktree remove` +
// `git branch -D`, NewWorktree/Remove, `cp -r`/`rm -rf` and
// NewCopy/Remove, so that every case sees the same load; it prints the
// medians and the disk a copy uses. Skipped without it.
func TestMeasureWorkspaces(t *testing.T) {
	repo := os.Getenv("LLMTOOLKIT_WORKSPACE_REPO")
	if repo == "" {
		t.Skip("LLMTOOLKIT_WORKSPACE_REPO is not set (bench/workspace.sh sets it)")
	}
	rounds, _ := strconv.Atoi(os.Getenv("ROUNDS"))
	rounds = max(rounds, 1)
	ctx := context.Background()
	med := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2].Seconds()
	}
	sh := func(args ...string) {
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	type times struct{ make, remove, cpu []time.Duration }
	cases := map[string]*times{"git-worktree": {}, "NewWorktree": {}, "cp-r": {}, "NewCopy": {}}
	var disk int64
	cloned := 0
	for r := range rounds {
		dir := filepath.Join(filepath.Dir(repo), fmt.Sprintf("ws-%d", r))
		plain := func() {
			c := cases["git-worktree"]
			t0, u0 := time.Now(), cpu()
			sh("git", "-C", repo, "-c", "core.hooksPath=/dev/null", "worktree", "add", "-q", "-b", fmt.Sprintf("plain-%d", r), dir+"-plain", "HEAD")
			t1 := time.Now()
			c.cpu = append(c.cpu, cpu()-u0)
			sh("git", "-C", repo, "worktree", "remove", "--force", dir+"-plain")
			sh("git", "-C", repo, "branch", "-qD", fmt.Sprintf("plain-%d", r))
			c.make, c.remove = append(c.make, t1.Sub(t0)), append(c.remove, time.Since(t1))
		}
		ours := func() {
			c := cases["NewWorktree"]
			t0, u0 := time.Now(), cpu()
			w, err := NewWorktree(ctx, repo, dir+"-wt", fmt.Sprintf("measure-%d", r))
			require.NoError(t, err)
			t1 := time.Now()
			c.cpu = append(c.cpu, cpu()-u0)
			require.NoError(t, w.Remove(ctx))
			require.NoDirExists(t, w.Dir)
			c.make, c.remove = append(c.make, t1.Sub(t0)), append(c.remove, time.Since(t1))
		}
		cpr := func() {
			c := cases["cp-r"]
			t0, u0 := time.Now(), cpu()
			sh("cp", "-r", repo, dir+"-cpr")
			t1 := time.Now()
			c.cpu = append(c.cpu, cpu()-u0)
			sh("rm", "-rf", dir+"-cpr")
			c.make, c.remove = append(c.make, t1.Sub(t0)), append(c.remove, time.Since(t1))
		}
		ourCopy := func() {
			c := cases["NewCopy"]
			t0, u0 := time.Now(), cpu()
			cp, err := NewCopy(ctx, repo, dir+"-cp", CopyOptions{CopyIgnored: true})
			require.NoError(t, err)
			t1 := time.Now()
			c.cpu = append(c.cpu, cpu()-u0)
			disk, cloned = du(t, filepath.Dir(cp.Dir)), cp.Cloned
			require.NoError(t, cp.Remove())
			c.make, c.remove = append(c.make, t1.Sub(t0)), append(c.remove, time.Since(t1))
		}
		// Every other round the other order: a case that follows another
		// pays for its writes still being flushed.
		order := []func(){plain, ours, cpr, ourCopy}
		if r%2 == 1 {
			order = []func(){ours, plain, ourCopy, cpr}
		}
		for _, f := range order {
			f()
		}
		last := func(name string) float64 { d := cases[name].make; return d[len(d)-1].Seconds() }
		fmt.Printf("round %d (%s first): git-worktree %.2f NewWorktree %.2f cp-r %.2f NewCopy %.2f s; load %s\n", r+1,
			map[bool]string{true: "ours", false: "git"}[r%2 == 1], last("git-worktree"), last("NewWorktree"), last("cp-r"), last("NewCopy"), loadavg())
	}
	for _, name := range []string{"git-worktree", "NewWorktree", "cp-r", "NewCopy"} {
		c := cases[name]
		fmt.Printf("%-12s %10.3f %10.3f %10.3f\n", name, med(c.make), med(c.remove), med(c.cpu))
	}
	fmt.Printf("NewCopy disk: %d KiB (work + base; %d files cloned); cp -r copies .git too\n", disk/1024, cloned)
}

// du returns the apparent size of the regular files under dir.
func du(t *testing.T, dir string) int64 {
	var n int64
	require.NoError(t, filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return err
	}))
	return n
}

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// cpu is the CPU time (user and system) this process and its waited-for
// children used so far: a case's cost that the machine's load does not
// change, unlike its wall time.
func cpu() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	d := func(tv syscall.Timeval) time.Duration { return time.Duration(tv.Nano()) }
	return d(self.Utime) + d(self.Stime) + d(kids.Utime) + d(kids.Stime)
}
