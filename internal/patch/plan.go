package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
)

// ErrExists is wrapped by the error for an added file, or a move's
// destination, that already exists.
var ErrExists = errors.New("already exists")

// ErrMissing is wrapped by the error for a deleted or updated file that
// does not exist.
var ErrMissing = errors.New("does not exist")

// Files is the file system a patch is applied to. Paths are the patch's
// own; Resolve turns each into the one path that is read and written (the
// canonical path: confined to a root, links followed), so two names of one
// file are one file.
type Files interface {
	// Resolve returns the path p designates, or an error for a path that
	// may not be written (outside the root, the root itself).
	Resolve(ctx context.Context, p string) (string, error)
	// Load reads the text file at path (resolved), with its mode. A
	// missing file is an error wrapping fs.ErrNotExist; anything that is
	// not a regular text file the tools may edit is another error.
	Load(ctx context.Context, p, path string) (content string, mode fs.FileMode, err error)
	// Write writes the file at path atomically, creating the folders
	// above it (returned, outermost first, so a rollback can remove
	// them); perm is the mode of a new file.
	Write(ctx context.Context, p, path string, content string, perm fs.FileMode) (created []string, err error)
	// Remove removes the file (or, in a rollback, the empty folder) at path.
	Remove(ctx context.Context, p, path string) error
}

// Change is what a patch does to one file.
type Change struct {
	Kind Kind
	// Path is the resolved path of the file; for a move, its old path.
	Path string
	// MoveTo is the resolved new path of a moved file.
	MoveTo string
	// Shown is the path as the patch names it (MoveTo's when moved).
	Shown string
	// Before and After are the texts ("" for an added or deleted file).
	Before, After string
	// Hunks is the number of hunks applied.
	Hunks int
}

// Plan is a patch worked out in memory: every file read, every hunk
// applied, nothing written yet.
type Plan struct {
	Changes []Change
	files   Files
	final   []finalState
	// failAt, in tests, makes the commit fail before its n-th step (1-based).
	failAt int
}

// finalState is a path the commit writes or removes, with what it held.
type finalState struct {
	path, shown string
	exists      bool // after the patch
	content     string
	mode        fs.FileMode
	// before
	had     bool
	old     string
	oldMode fs.FileMode
}

// state is a path as the operations so far left it.
type state struct {
	shown   string
	exists  bool
	content string
	mode    fs.FileMode
	// as on disk
	had     bool
	old     string
	oldMode fs.FileMode
}

// Prepare works out a patch in memory: it resolves every path, reads every
// file it touches once, and applies the operations in order, each to what
// the previous ones left (a file updated twice sees the first update; a
// file deleted may be added again). It writes nothing. An added file or a
// move's destination that exists (and is not deleted earlier in the
// patch) is refused, as is a deleted or updated file that does not
// exist; the error names the operation and, for a hunk, the hunk.
func Prepare(ctx context.Context, files Files, ops []Op) (*Plan, error) {
	states := map[string]*state{}
	var order []string
	get := func(p, path string) (*state, error) {
		if s, ok := states[path]; ok {
			return s, nil
		}
		s := &state{shown: p}
		content, mode, err := files.Load(ctx, p, path)
		switch {
		case err == nil:
			s.exists, s.content, s.mode = true, content, mode
			s.had, s.old, s.oldMode = true, content, mode
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, err
		}
		states[path] = s
		order = append(order, path)
		return s, nil
	}
	plan := &Plan{files: files}
	for i, op := range ops {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		what := fmt.Sprintf("%s %s", op.Kind, op.Path)
		opErr := func(err error) error {
			var he *HunkError
			if errors.As(err, &he) {
				return fmt.Errorf("operation %d (%s), hunk %d%s: %w", i+1, what, he.Hunk, lineNote(he.Line), he.Err)
			}
			return fmt.Errorf("operation %d (%s)%s: %w", i+1, what, lineNote(op.Line), err)
		}
		path, err := files.Resolve(ctx, op.Path)
		if err != nil {
			return nil, opErr(err)
		}
		s, err := get(op.Path, path)
		if err != nil {
			return nil, opErr(err)
		}
		switch op.Kind {
		case Add:
			if s.exists {
				return nil, opErr(fmt.Errorf("%s %w; to change it use Update File, or Delete File first", op.Path, ErrExists))
			}
			s.exists, s.content, s.mode = true, op.Content, 0
			plan.Changes = append(plan.Changes, Change{Kind: Add, Path: path, Shown: op.Path, After: op.Content})
		case Delete:
			if !s.exists {
				return nil, opErr(fmt.Errorf("%s %w", op.Path, ErrMissing))
			}
			plan.Changes = append(plan.Changes, Change{Kind: Delete, Path: path, Shown: op.Path, Before: s.content})
			s.exists, s.content = false, ""
		case Update:
			if !s.exists {
				return nil, opErr(fmt.Errorf("%s %w", op.Path, ErrMissing))
			}
			after, err := ApplyHunks(ctx, op.Path, s.content, op.Hunks)
			if err != nil {
				return nil, opErr(err)
			}
			ch := Change{Kind: Update, Path: path, Shown: op.Path, Before: s.content, After: after, Hunks: len(op.Hunks)}
			if op.MoveTo == "" {
				s.content = after
				plan.Changes = append(plan.Changes, ch)
				break
			}
			dest, err := files.Resolve(ctx, op.MoveTo)
			if err != nil {
				return nil, opErr(fmt.Errorf("*** Move to %s: %w", op.MoveTo, err))
			}
			if dest == path {
				s.content = after
				plan.Changes = append(plan.Changes, ch)
				break
			}
			d, err := get(op.MoveTo, dest)
			if err != nil {
				return nil, opErr(fmt.Errorf("*** Move to %s: %w", op.MoveTo, err))
			}
			if d.exists {
				return nil, opErr(fmt.Errorf("*** Move to %s: it %w; Delete File it first in the same patch to replace it", op.MoveTo, ErrExists))
			}
			d.exists, d.content, d.mode = true, after, s.mode
			s.exists, s.content = false, ""
			ch.MoveTo, ch.Shown = dest, op.MoveTo
			plan.Changes = append(plan.Changes, ch)
		default:
			return nil, opErr(fmt.Errorf("unknown operation kind %d", op.Kind))
		}
	}
	for _, path := range order {
		s := states[path]
		if s.exists == s.had && (!s.exists || s.content == s.old) {
			continue // as it was
		}
		plan.final = append(plan.final, finalState{
			path: path, shown: s.shown, exists: s.exists, content: s.content, mode: s.mode,
			had: s.had, old: s.old, oldMode: s.oldMode,
		})
	}
	return plan, nil
}

func lineNote(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" at patch line %d", n)
}

// ErrRolledBack is wrapped by the error of a commit that failed part way
// and was undone.
var ErrRolledBack = errors.New("the patch was rolled back, no file changed")

// Commit writes the plan: every file that ends with content is written
// atomically, then every file that ends deleted is removed. When a step
// fails, the steps done are undone in reverse (files rewritten with what
// they held, files created and folders made removed) and the error wraps
// ErrRolledBack; if an undo fails too, the error says which files could
// not be restored. A plan that changes nothing writes nothing.
func (p *Plan) Commit(ctx context.Context) error {
	steps := slices.Clone(p.final)
	// Writes first, removes last: a move never loses its file.
	slices.SortStableFunc(steps, func(a, b finalState) int {
		switch {
		case a.exists && !b.exists:
			return -1
		case !a.exists && b.exists:
			return 1
		}
		return 0
	})
	var undo []step
	for i, st := range steps {
		var err error
		var created []string
		if p.failAt > 0 && i+1 >= p.failAt {
			err = errors.New("injected failure")
		} else if err = ctx.Err(); err == nil {
			if st.exists {
				perm := st.mode
				if perm == 0 {
					perm = 0o666
				}
				created, err = p.files.Write(ctx, st.shown, st.path, st.content, perm)
			} else {
				err = p.files.Remove(ctx, st.shown, st.path)
			}
		}
		if err != nil {
			if rollbackErr := p.rollback(undo); rollbackErr != nil {
				return fmt.Errorf("%s: %w; undoing the steps done failed too: %v", st.shown, err, rollbackErr)
			}
			return fmt.Errorf("%s: %w (%w)", st.shown, err, ErrRolledBack)
		}
		undo = append(undo, step{st, created})
	}
	return nil
}

// step is a commit step done: the path's states and the folders it made.
type step struct {
	st      finalState
	created []string
}

// rollback undoes steps, last first. It uses a fresh context: an undo
// must not stop because the caller's context ended.
func (p *Plan) rollback(steps []step) error {
	ctx := context.Background()
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		st := steps[i].st
		var err error
		if st.had {
			_, err = p.files.Write(ctx, st.shown, st.path, st.old, st.oldMode)
		} else {
			err = p.files.Remove(ctx, st.shown, st.path)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", st.shown, err))
		}
		created := steps[i].created
		for j := len(created) - 1; j >= 0; j-- {
			if err := p.files.Remove(ctx, created[j], created[j]); err != nil {
				errs = append(errs, fmt.Errorf("folder %s: %w", created[j], err))
			}
		}
	}
	return errors.Join(errs...)
}

// Apply prepares and commits a patch: all of it or, on any error, none.
func Apply(ctx context.Context, files Files, ops []Op) ([]Change, error) {
	plan, err := Prepare(ctx, files, ops)
	if err != nil {
		return nil, err
	}
	if err := plan.Commit(ctx); err != nil {
		return nil, err
	}
	return plan.Changes, nil
}
