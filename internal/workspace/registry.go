package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Registry records the workspaces a host made in one folder, one file
// each, so that those a crashed process left are found and removed at the
// next start ([Registry.Sweep]): no stale worktree, branch or copy.
type Registry struct {
	// Dir holds the records.
	Dir string
}

// record is one workspace's file in a Registry.
type record struct {
	Kind   string `json:"kind"` // "worktree" or "copy"
	Repo   string `json:"repo,omitempty"`
	Dir    string `json:"dir"`
	Branch string `json:"branch,omitempty"`
	// PID and Start name the process that made it (Start: its start
	// time, so that a PID reused by another process is not taken for
	// it); Sweep leaves the workspaces of a process still running.
	PID   int    `json:"pid,omitempty"`
	Start string `json:"start,omitempty"`
}

// name is the record file of a workspace folder.
func (r Registry) name(dir string) string {
	return filepath.Join(r.Dir, strings.NewReplacer("/", "_", "\\", "_").Replace(filepath.Clean(dir))+".json")
}

// AddWorktree records w; call it right after [NewWorktree].
func (r Registry) AddWorktree(w *Worktree) error {
	return r.add(record{Kind: "worktree", Repo: w.Repo, Dir: w.Dir, Branch: w.Branch})
}

// AddCopy records c; call it right after [NewCopy].
func (r Registry) AddCopy(c *Copy) error {
	return r.add(record{Kind: "copy", Dir: filepath.Dir(c.Dir)})
}

func (r Registry) add(rec record) error {
	rec.PID = os.Getpid()
	rec.Start = processStart(rec.PID)
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return fmt.Errorf("workspace: the registry: %w", err)
	}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(r.name(rec.Dir), b, 0o600); err != nil {
		return fmt.Errorf("workspace: the registry: %w", err)
	}
	return nil
}

// Forget drops the record of the workspace in dir (its folder: a
// Worktree's Dir, a Copy's parent of Dir), once it is removed or kept.
func (r Registry) Forget(dir string) error {
	if err := os.Remove(r.name(dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("workspace: the registry: %w", err)
	}
	return nil
}

// Sweep removes every workspace recorded by a process that is no longer
// running (those a crashed process left: call it at start, before making
// any) and their records, and returns how many it removed. The
// workspaces of a process still running, this one included, are left
// alone, so hosts may share the folder.
func (r Registry) Sweep(ctx context.Context) (int, error) {
	entries, err := os.ReadDir(r.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("workspace: the registry: %w", err)
	}
	n := 0
	var errs []error
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(r.Dir, e.Name())
		b, err := os.ReadFile(p)
		var rec record
		if err == nil {
			err = json.Unmarshal(b, &rec)
		}
		if err != nil || rec.Dir == "" {
			errs = append(errs, fmt.Errorf("%s: %w", p, errors.Join(err, errors.New("not a workspace record"))))
			continue
		}
		if rec.PID != 0 && alive(rec.PID, rec.Start) {
			continue
		}
		switch rec.Kind {
		case "worktree":
			err = (&Worktree{Repo: rec.Repo, Dir: rec.Dir, Branch: rec.Branch}).Remove(ctx)
		case "copy":
			err = os.RemoveAll(rec.Dir)
		default:
			err = fmt.Errorf("unknown kind %q", rec.Kind)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return n, fmt.Errorf("workspace: sweeping %s: %w", r.Dir, err)
	}
	return n, nil
}

// processStart returns the start time of process pid as /proc gives it
// (field 22 of its stat, in clock ticks since boot), "" where there is
// no /proc.
func processStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// alive reports whether process pid, started at start, still runs.
func alive(pid int, start string) bool {
	if start != "" {
		return processStart(pid) == start
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}
