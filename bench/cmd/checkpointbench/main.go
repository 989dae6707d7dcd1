// Command checkpointbench measures checkpoints (package checkpoint) on a
// copy of a tree (default: the Go source tree, about 15k files) against
// `git status` on the same copy, in one run, for bench/checkpoint.sh:
//
//   - per turn when nothing changed, and when 10 files changed: the
//     median wall time of a Save (walk, stat, hash what moved, store in
//     SQLite) and of `git status --porcelain`, alternating, and the ratio;
//   - the store's size after a run of TURNS turns (10 files changed each);
//   - the time of a rewind across 1 turn, half the run and the whole run.
//
// The per-turn cases give the CPU time (user and system) of both too.
// With -cpuprofile, the per-turn cases are profiled into FILE (go tool
// pprof), with -rewindprofile the rewinds; -turns 0 skips the store run
// and the rewinds.
//
// Each rewind is made and undone -rewinds times; the medians are given.
//
// Usage: checkpointbench [-runs N] [-turns N] [-rewinds N] [-cpuprofile FILE] [-rewindprofile FILE] [TREE]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/llmtoolkit/llmtoolkit/checkpoint"
)

func main() {
	runs := flag.Int("runs", 9, "measured pairs per case")
	turns := flag.Int("turns", 200, "turns of the store-size run (0: none, no rewinds)")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the per-turn cases to this file")
	flag.StringVar(&rewindProfile, "rewindprofile", "", "write a CPU profile of the rewinds to this file")
	flag.IntVar(&rewinds, "rewinds", 5, "times each rewind is made and undone (medians)")
	flag.Parse()
	src := flag.Arg(0)
	if src == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		check(err)
		src = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	if err := run(src, *runs, *turns); err != nil {
		fmt.Fprintln(os.Stderr, "checkpointbench:", err)
		os.Exit(1)
	}
}

// cpuProfile and rewindProfile are where the CPU profiles of the
// per-turn cases and of the rewinds go ("": none).
var cpuProfile, rewindProfile string

// selfCPU is the CPU time (user and system) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "checkpointbench:", err)
		os.Exit(1)
	}
}

func sh(dir string, args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func load() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func run(src string, runs, turns int) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "checkpointbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	fmt.Printf("copying %s and committing it to git...\n", src)
	if err := sh(tmp, "cp", "-a", src, tree); err != nil {
		return err
	}
	if err := sh(tree, "git", "init", "-q"); err != nil {
		return err
	}
	if err := sh(tree, "git", "add", "-A"); err != nil {
		return err
	}
	if err := sh(tree, "git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "tree"); err != nil {
		return err
	}
	var files []string
	_ = filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	})
	fmt.Printf("%d .go files, load %s\n", len(files), load())
	time.Sleep(100 * time.Millisecond) // past the racy margin of the copy

	dbPath := filepath.Join(tmp, "checkpoints.db")
	db, err := checkpoint.OpenSQLite(dbPath)
	if err != nil {
		return err
	}
	store, err := checkpoint.NewStore(db, checkpoint.WithMaxPerConversation(0))
	if err != nil {
		return err
	}
	c, err := checkpoint.New(store, tree)
	if err != nil {
		return err
	}
	start := time.Now()
	first, err := c.Save(ctx, checkpoint.KindTurn, "")
	if err != nil {
		return err
	}
	fmt.Printf("first checkpoint (every file read and stored): %v, %d entries\n", time.Since(start).Round(time.Millisecond), first.Entries)
	_ = sh(tree, "git", "status", "--porcelain") // warm both
	if _, err := c.Save(ctx, checkpoint.KindTurn, ""); err != nil {
		return err
	}

	// The CPU time (user and system) of each is measured beside the wall
	// time: on a loaded machine it tells the work apart from the waiting.
	var ourCPU, gitCPU []time.Duration
	gitStatus := func() (time.Duration, error) {
		t := time.Now()
		cmd := exec.Command("git", "status", "--porcelain")
		cmd.Dir = tree
		err := cmd.Run()
		d := time.Since(t)
		if err == nil {
			gitCPU = append(gitCPU, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
		return d, err
	}
	save := func() (time.Duration, error) {
		before := selfCPU()
		t := time.Now()
		_, err := c.Save(ctx, checkpoint.KindTurn, "")
		d := time.Since(t)
		ourCPU = append(ourCPU, selfCPU()-before)
		return d, err
	}
	turn := 0
	change := func() {
		turn++
		for i := range 10 {
			p := files[(turn*10+i)*7%len(files)]
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			check(err)
			fmt.Fprintf(f, "// turn %d\n", turn)
			f.Close()
		}
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	for _, changed := range []bool{false, true} {
		var ours, git []time.Duration
		ourCPU, gitCPU = nil, nil
		for i := range runs {
			if changed {
				change()
			}
			var a, b time.Duration
			var err error
			if i%2 == 0 {
				if a, err = save(); err == nil {
					b, err = gitStatus()
				}
			} else {
				if b, err = gitStatus(); err == nil {
					a, err = save()
				}
			}
			if err != nil {
				return err
			}
			ours, git = append(ours, a), append(git, b)
		}
		name := "nothing changed"
		if changed {
			name = "10 files changed"
		}
		mo, mg := median(ours), median(git)
		fmt.Printf("per turn, %s: checkpoint %v, git status %v, ratio %.2f (median of %d, load %s)\n",
			name, mo.Round(10*time.Microsecond), mg.Round(10*time.Microsecond), float64(mo)/float64(mg), runs, load())
		co, cg := median(ourCPU), median(gitCPU)
		fmt.Printf("  CPU time (user+system), %s: checkpoint %v, git status %v, ratio %.2f\n",
			name, co.Round(10*time.Microsecond), cg.Round(10*time.Microsecond), float64(co)/float64(cg))
	}

	if cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if turns == 0 {
		return nil
	}
	var ids []string
	start = time.Now()
	for range turns {
		change()
		cp, err := c.Save(ctx, checkpoint.KindTurn, "")
		if err != nil {
			return err
		}
		ids = append(ids, cp.ID)
	}
	elapsed := time.Since(start)
	_ = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error
	info, err := os.Stat(dbPath)
	if err != nil {
		return err
	}
	var treeBytes int64
	_ = filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				treeBytes += fi.Size()
			}
		}
		return nil
	})
	fmt.Printf("store after %d more turns (10 files changed each, %v in all): %.1f MiB, tree %.1f MiB (load %s)\n",
		turns, elapsed.Round(time.Millisecond), float64(info.Size())/(1<<20), float64(treeBytes)/(1<<20), load())

	if rewindProfile != "" {
		f, err := os.Create(rewindProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for _, back := range []int{1, turns / 2, turns} {
		to := first.ID
		if back < turns {
			to = ids[len(ids)-1-back]
		}
		var walls, cpus []time.Duration
		var r checkpoint.Rewound
		for range rewinds {
			cpu := selfCPU()
			t := time.Now()
			var err error
			if r, err = c.Rewind(ctx, to, checkpoint.RewindOptions{}); err != nil {
				return err
			}
			walls, cpus = append(walls, time.Since(t)), append(cpus, selfCPU()-cpu)
			if !r.Exact {
				return fmt.Errorf("the rewind %d turns back is not exact", back)
			}
			if _, err := c.Rewind(ctx, r.Before.ID, checkpoint.RewindOptions{}); err != nil {
				return err
			}
		}
		fmt.Printf("rewind %d turns back: %v (CPU %v; medians of %d), %d changes, exact %v (load %s)\n", back, median(walls).Round(time.Millisecond),
			median(cpus).Round(time.Millisecond), rewinds, len(r.Changes), r.Exact, load())
	}
	return nil
}

// rewinds is how many times each rewind is made (and undone).
var rewinds = 1
