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
	// RunID names the durable run the workspace was made for: Sweep
	// keeps it while that run may resume, and [Registry.Reopen] gives it
	// back to the resumed run.
	RunID string `json:"run_id,omitempty"`
	// A worktree's facts read when it was made (never from its .git
	// file, which the sub-agent may have rewritten since).
	Private string `json:"private,omitempty"`
	Base    string `json:"base,omitempty"`
	Sub     string `json:"sub,omitempty"`
	GitDir  string `json:"git_dir,omitempty"`
}

// name is the record file of a workspace folder.
func (r Registry) name(dir string) string {
	return filepath.Join(r.Dir, strings.NewReplacer("/", "_", "\\", "_").Replace(filepath.Clean(dir))+".json")
}

// AddWorktree records w, made for the durable run runID ("" for none);
// call it right after [NewWorktree].
func (r Registry) AddWorktree(w *Worktree, runID string) error {
	return r.add(record{Kind: "worktree", Repo: w.Repo, Dir: w.Dir, Branch: w.Branch, RunID: runID,
		Private: w.privateDir, Base: w.base, Sub: w.Sub, GitDir: w.GitDir})
}

// AddCopy records c, made for the durable run runID ("" for none); call
// it right after [NewCopy].
func (r Registry) AddCopy(c *Copy, runID string) error {
	return r.add(record{Kind: "copy", Dir: filepath.Dir(c.Dir), RunID: runID})
}

// ErrInUse is wrapped by the error of [Registry.Reopen] for a workspace
// a live process holds.
var ErrInUse = errors.New("workspace: held by a live process")

// Reopen returns the workspace recorded for dir (a Worktree's Dir, a
// Copy's parent of Dir) by a process that is no longer running, or by
// this one, for the durable run runID, and records it as this process's:
// a resumed run finds its sub-agent's workspace again. It returns
// (nil, nil, nil) when there is no such record; an error wrapping
// [ErrInUse] when a live process holds it; an error when the record
// names another run or kind. root and opt are those of the copy's
// [NewCopy].
func (r Registry) Reopen(dir, kind, runID, root string, opt CopyOptions) (*Worktree, *Copy, error) {
	b, err := os.ReadFile(r.name(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	var rec record
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("workspace: the registry's record of %s: %w", dir, err)
	}
	switch {
	case rec.PID != 0 && rec.PID != os.Getpid() && alive(rec.PID, rec.Start):
		return nil, nil, fmt.Errorf("%w: %s (process %d)", ErrInUse, dir, rec.PID)
	case rec.RunID != runID || rec.Kind != kind:
		return nil, nil, fmt.Errorf("workspace: %s was made for run %q as a %s, not for run %q as a %s", dir, rec.RunID, rec.Kind, runID, kind)
	}
	var wt *Worktree
	var cp *Copy
	switch rec.Kind {
	case "worktree":
		wt = &Worktree{Repo: rec.Repo, Dir: rec.Dir, Branch: rec.Branch, Sub: rec.Sub, GitDir: rec.GitDir, privateDir: rec.Private, base: rec.Base}
		if info, err := os.Lstat(wt.Dir); err != nil || !info.IsDir() || rec.Private == "" || rec.Base == "" {
			return nil, nil, fmt.Errorf("workspace: the worktree %s is gone or its record incomplete: %w", dir, errors.Join(err, errors.New("not a worktree")))
		}
	case "copy":
		if cp, err = OpenCopy(root, rec.Dir, opt); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, fmt.Errorf("workspace: unknown kind %q", rec.Kind)
	}
	if err := r.add(rec); err != nil { // this process's now
		return nil, nil, err
	}
	return wt, cp, nil
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
// alone, so hosts may share the folder; so are those of a durable run
// that may resume (mayResume reports it; nil, or an error from it, means
// it may), which [Registry.Reopen] gives back to the resumed run.
func (r Registry) Sweep(ctx context.Context, mayResume func(ctx context.Context, runID string) (bool, error)) (int, error) {
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
		if rec.RunID != "" {
			if mayResume == nil {
				continue
			}
			if ok, err := mayResume(ctx, rec.RunID); ok || err != nil {
				continue
			}
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
