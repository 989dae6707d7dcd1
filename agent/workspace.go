package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/workspace"
	"github.com/llmtoolkit/llmtoolkit/internal/writecheck"
)

// Isolation says where a sub-agent works ([SubAgentConfig.Isolation]).
type Isolation string

// The isolations of a sub-agent.
const (
	// IsolationNone: the sub-agent works on the parent's tools, in the
	// parent's folder (the default).
	IsolationNone Isolation = "none"
	// IsolationWorktree: a git worktree of the parent's repository on a
	// new branch (agent/ID) at its HEAD, for a root inside a git
	// repository with a commit; the parent's uncommitted changes are not
	// in it.
	IsolationWorktree Isolation = "worktree"
	// IsolationCopy: a copy of the parent's root (files cloned where the
	// file system shares blocks, else copied; bounded by
	// [WorkspaceConfig].MaxFiles and MaxBytes), for any folder.
	IsolationCopy Isolation = "copy"
)

// WorkspaceAction is what becomes of a sub-agent's workspace when it
// ends ([WorkspaceConfig.Decide], the finish_workspace tool).
type WorkspaceAction string

// The actions on a workspace.
const (
	// ActionApply merges its changes into the parent's tree, three ways
	// per file, whole or not at all, then removes it; on a conflict
	// nothing is written and the workspace waits (see
	// [WorkspaceConfig.Decide]).
	ActionApply WorkspaceAction = "apply"
	// ActionKeep leaves it where it is, named (its branch, its folder),
	// out of the registry: neither Close nor a later Sweep removes it.
	ActionKeep WorkspaceAction = "keep"
	// ActionDiscard removes it, and its branch.
	ActionDiscard WorkspaceAction = "discard"
	// ActionAsk leaves the choice to the model, through the
	// finish_workspace tool ([WorkspaceConfig.ModelDecides]); a
	// workspace nobody decided on is discarded at [Workspaces.Close].
	ActionAsk WorkspaceAction = "ask"
)

// FinishToolName is the name of the tool through which the model decides
// on a sub-agent's workspace ([WorkspaceConfig.ModelDecides]).
const FinishToolName = "finish_workspace"

// Defaults of [WorkspaceConfig].
const (
	DefaultWorkspaceMaxFiles     = 50_000
	DefaultWorkspaceMaxBytes     = 2 << 30
	DefaultWorkspaceMaxDiffBytes = 64 << 10
	DefaultPatchDir              = ".llmtoolkit/patches"
)

// ErrWorkspace is wrapped by the errors of a sub-agent's workspace: one
// that cannot be made, an isolation the host does not allow, an unknown
// workspace given to finish_workspace.
var ErrWorkspace = errors.New("agent: workspace")

// Workspace is a sub-agent's own folder, as [WorkspaceConfig.Tools] is
// given it.
type Workspace struct {
	// AgentID is the sub-agent's id.
	AgentID string
	// Isolation is IsolationWorktree or IsolationCopy.
	Isolation Isolation
	// Root is the folder the sub-agent's tools must be rooted in: the
	// place of the parent's root in the workspace, so that a path
	// relative to one names the same file in the other (the permission
	// rules, on canonical paths relative to the root, hold unchanged).
	Root string
	// Branch is a worktree's branch.
	Branch string
	// GitDir is, for a worktree, the parent repository's common git
	// folder (its objects, refs, hooks and config): keep it out of the
	// sub-agent's sandbox (never in its Readable folders), or a command
	// could write a hook or a config that runs on the host's next git
	// command. The sandbox shows only the system folders, the root and
	// Readable, so a repository outside them is hidden (git inside the
	// worktree then finds no repository).
	GitDir string
}

// WorkspaceResult is what a sub-agent left in its workspace, as
// [WorkspaceConfig.Decide] is given it.
type WorkspaceResult struct {
	// Workspace is where it worked.
	Workspace Workspace
	// Diff is its changes as one patch (paths relative to the parent's
	// root), "" for none.
	Diff string
	// Files are the files the patch changes.
	Files []string
	// Err is why the sub-agent stopped without an answer, nil when it
	// answered.
	Err error
}

// WorkspaceConfig configures [NewWorkspaces].
type WorkspaceConfig struct {
	// Root is the parent's root: the folder its code tools are rooted in
	// and the changes are applied to (required).
	Root string
	// Dir holds the workspaces and their registry; "" means
	// os.TempDir()/llmtoolkit-workspaces. The workspaces a process that
	// died left there are removed by [NewWorkspaces], those of a process
	// still running never, nor those of a durable run that may resume
	// (see MayResume). Workers that resume each other's runs share it.
	Dir string
	// Tools makes the sub-agent's tools for its workspace (required):
	// the host's code tools rooted in ws.Root (with bash's sandbox, jobs,
	// checkpoints as the host sets them up: codetools.New(ws.Root, ...)
	// returns a resolver that is also the closer), plus whatever else the
	// host offers. The closer, when not nil, is closed when the
	// sub-agent ends, before its changes are read (its background jobs
	// end with it).
	Tools func(ctx context.Context, ws Workspace) (llmtoolkit.Resolver, io.Closer, error)
	// Decide chooses what becomes of a workspace when its sub-agent
	// ends. Nil means ActionAsk when ModelDecides, else ActionKeep when
	// there are changes and ActionDiscard when there are none. A
	// sub-agent cancelled or abandoned at its deadline is discarded
	// without asking. ActionAsk without ModelDecides keeps it (there is
	// no one else to ask). When an apply conflicts, nothing is written and
	// the workspace waits for the model (ModelDecides) or the host
	// ([Workspaces.Finish]); Close discards it.
	Decide func(ctx context.Context, r WorkspaceResult) WorkspaceAction
	// ModelDecides offers the finish_workspace tool beside spawn_agent:
	// the model applies, keeps or discards a workspace left to it.
	ModelDecides bool
	// MaxFiles and MaxBytes bound a copy; 0 means
	// [DefaultWorkspaceMaxFiles] and [DefaultWorkspaceMaxBytes].
	MaxFiles int
	MaxBytes int64
	// Skip leaves files out of a copy (slash-separated paths relative to
	// Root); .git and PatchDir are always left out, and so are the paths
	// of the spawn_agent call's llmtoolkit.Scope ExcludedPaths and
	// HiddenPaths (the host's deny rules, as agent's guard sets them).
	// What is left out, or ignored (see CopyIgnored), is not copied, not
	// in the diff, and never written or removed by an apply.
	Skip func(rel string) bool
	// AllowUnconfinedCommands lets the sub-agent's tools run commands
	// that no OS sandbox confines to its workspace. Without it, a tool of
	// Tools' resolver that runs commands (llmtoolkit.Tool.Commands) must
	// declare a sandbox (Commands.Sandbox, as codetools' bash does under
	// WithSandbox) that writes only inside ws.Root and reads neither the
	// parent's root nor its repository: the workspace is refused
	// otherwise ([ErrUnconfined]), and so is any call of a tool the
	// resolver does not list. With it, such commands write wherever the
	// host may, the parent's tree included.
	AllowUnconfinedCommands bool
	// CopyIgnored copies what the root's .gitignore files ignore
	// (node_modules, build outputs) too, and reports it in the diff; by
	// default a copy leaves it out, as codetools' walkers do.
	CopyIgnored bool
	// MaxDiffBytes caps the diff in the payload and in Decide's result;
	// 0 means [DefaultWorkspaceMaxDiffBytes]. The patch file is whole.
	MaxDiffBytes int
	// PatchDir is where each sub-agent's patch is written, relative to
	// Root, as PatchDir/ID.patch, for the model to read with the parent's
	// tools; "" means [DefaultPatchDir]. Its first folder gets a
	// .gitignore of "*". The files are removed at Close.
	PatchDir string
	// MayResume tells NewWorkspaces' sweep whether the durable run runID
	// (llmtoolkit.Scope.RunID of the spawn_agent call) may still resume.
	// In a durable run a workspace is named by the run and the call (its
	// idempotency key), so a run resumed after a crash that runs the
	// spawn_agent call again finds the workspace its interrupted attempt
	// left, edits and all (SubAgentPayload.Resumed), instead of a new one:
	// the sweep keeps a dead process's workspace of a durable run while
	// MayResume reports true or fails, and removes it once it reports
	// false (durable/dbos: Engine.MayResume). Nil keeps them all.
	MayResume func(ctx context.Context, runID string) (bool, error)
	// Logger receives what cleaning up could not do; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Workspaces makes, tracks and removes the workspaces of the sub-agents
// of one host ([SubAgentConfig.Workspaces]). Close it when the host ends.
type Workspaces struct {
	cfg     WorkspaceConfig
	reg     workspace.Registry
	repo    string // the repository holding Root, "" for none
	applyMu sync.Mutex
	mu      sync.Mutex
	open    map[string]*openWorkspace // by agent id, until removed or kept
	patches []string                  // the patch files written
	swept   int
	closed  bool
}

// openWorkspace is one sub-agent's workspace.
type openWorkspace struct {
	ws       Workspace
	wt       *workspace.Worktree
	cp       *workspace.Copy
	dir      string // its registry key
	tools    llmtoolkit.Resolver
	closer   io.Closer
	closeOne sync.Once
	waiting  bool // ended, left to a decision
	resumed  bool // found again in a resumed durable run
}

// NewWorkspaces checks cfg, removes what a crashed host left in cfg.Dir
// ([Workspaces.Swept] says how many) and returns the workspaces of this
// host.
func NewWorkspaces(ctx context.Context, cfg WorkspaceConfig) (*Workspaces, error) {
	switch {
	case cfg.Root == "":
		return nil, fmt.Errorf("%w: WorkspaceConfig.Root is empty; give the parent's root", ErrInvalidConfig)
	case cfg.Tools == nil:
		return nil, fmt.Errorf("%w: WorkspaceConfig.Tools is nil; give the function that roots the sub-agent's tools in its workspace", ErrInvalidConfig)
	case cfg.MaxFiles < 0 || cfg.MaxBytes < 0 || cfg.MaxDiffBytes < 0:
		return nil, fmt.Errorf("%w: WorkspaceConfig limits must not be negative", ErrInvalidConfig)
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("%w: WorkspaceConfig.Root: %w", ErrInvalidConfig, err)
	}
	if info, err := os.Stat(root); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("%w: WorkspaceConfig.Root %s is not a folder", ErrInvalidConfig, root)
	}
	cfg.Root = root
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(os.TempDir(), "llmtoolkit-workspaces")
	}
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return nil, fmt.Errorf("%w: WorkspaceConfig.Dir: %w", ErrInvalidConfig, err)
	}
	if rel, err := filepath.Rel(root, cfg.Dir); err == nil && !strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("%w: WorkspaceConfig.Dir %s is inside Root: put the workspaces outside the parent's tree", ErrInvalidConfig, cfg.Dir)
	}
	if cfg.PatchDir == "" {
		cfg.PatchDir = DefaultPatchDir
	}
	cfg.PatchDir = path.Clean(filepath.ToSlash(cfg.PatchDir))
	if path.IsAbs(cfg.PatchDir) || cfg.PatchDir == "." || strings.HasPrefix(cfg.PatchDir, "../") || cfg.PatchDir == ".." {
		return nil, fmt.Errorf("%w: WorkspaceConfig.PatchDir %q must be a folder inside Root", ErrInvalidConfig, cfg.PatchDir)
	}
	if cfg.MaxFiles == 0 {
		cfg.MaxFiles = DefaultWorkspaceMaxFiles
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultWorkspaceMaxBytes
	}
	if cfg.MaxDiffBytes == 0 {
		cfg.MaxDiffBytes = DefaultWorkspaceMaxDiffBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: making WorkspaceConfig.Dir: %w", ErrWorkspace, err)
	}
	w := &Workspaces{cfg: cfg, reg: workspace.Registry{Dir: filepath.Join(cfg.Dir, ".records")}, open: map[string]*openWorkspace{}}
	if top, err := workspace.Repository(ctx, root); err == nil {
		w.repo = top
	}
	n, err := w.reg.Sweep(ctx, cfg.MayResume)
	w.swept = n
	if err != nil {
		cfg.Logger.WarnContext(ctx, "agent: workspaces a crash left could not all be removed", slog.Any("error", err))
	}
	return w, nil
}

// Swept is how many workspaces a crashed host left that NewWorkspaces
// removed.
func (w *Workspaces) Swept() int { return w.swept }

// allowed lists the isolations this host can make.
func (w *Workspaces) allowed() []string {
	if w.repo != "" {
		return []string{string(IsolationNone), string(IsolationWorktree), string(IsolationCopy)}
	}
	return []string{string(IsolationNone), string(IsolationCopy)}
}

// make makes the workspace of sub-agent id and its tools. In a durable
// run (key is then the call's, the same in every attempt) it is named by
// key, and one an interrupted attempt left is reopened.
func (w *Workspaces) make(ctx context.Context, id string, iso Isolation, key string) (*openWorkspace, error) {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("%w: the workspaces are closed", ErrWorkspace)
	}
	runID := llmtoolkit.ScopeFrom(ctx).RunID
	var dir string
	if key != "" && runID != "" {
		dir = filepath.Join(w.cfg.Dir, key)
	} else {
		var suffix [3]byte
		_, _ = rand.Read(suffix[:])
		dir = filepath.Join(w.cfg.Dir, sanitize(id)+"-"+hex.EncodeToString(suffix[:]))
		runID = ""
	}
	o := &openWorkspace{ws: Workspace{AgentID: id, Isolation: iso}}
	branch := "agent/" + sanitize(id)
	if runID != "" {
		wt, cp, err := w.reg.Reopen(dir, string(iso), runID, w.cfg.Root, w.copyOptions(ctx))
		if err != nil {
			return nil, fmt.Errorf("%w: the workspace of the interrupted attempt: %w", ErrWorkspace, err)
		}
		switch {
		case wt != nil:
			o.wt, o.dir, o.resumed = wt, wt.Dir, true
			o.ws.Root, o.ws.Branch, o.ws.GitDir = wt.Root(), wt.Branch, wt.GitDir
			return w.withTools(ctx, o)
		case cp != nil:
			o.cp, o.dir, o.resumed = cp, dir, true
			o.ws.Root = cp.Dir
			return w.withTools(ctx, o)
		}
		// Not recorded: an attempt that died before its record was
		// written may have left the folder (and a worktree's branch).
		if _, err := os.Lstat(dir); err == nil {
			if iso == IsolationWorktree && w.repo != "" {
				_ = (&workspace.Worktree{Repo: w.repo, Dir: dir, Branch: branch}).Remove(ctx)
			}
			if err := os.RemoveAll(dir); err != nil {
				return nil, fmt.Errorf("%w: removing what an interrupted attempt left: %w", ErrWorkspace, err)
			}
		}
	}
	switch iso {
	case IsolationWorktree:
		if w.repo == "" {
			return nil, fmt.Errorf("%w: isolation worktree needs a root inside a git repository with a commit, and %s is in none; use isolation copy", ErrWorkspace, w.cfg.Root)
		}
		wt, err := workspace.NewWorktree(ctx, w.cfg.Root, dir, branch)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrWorkspace, err)
		}
		o.wt, o.dir = wt, wt.Dir
		o.ws.Root, o.ws.Branch, o.ws.GitDir = wt.Root(), wt.Branch, wt.GitDir
		if err := w.reg.AddWorktree(wt, runID); err != nil {
			_ = wt.Remove(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("%w: %w", ErrWorkspace, err)
		}
	case IsolationCopy:
		cp, err := workspace.NewCopy(ctx, w.cfg.Root, dir, w.copyOptions(ctx))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrWorkspace, err)
		}
		o.cp, o.dir = cp, dir
		o.ws.Root = cp.Dir
		if err := w.reg.AddCopy(cp, runID); err != nil {
			_ = cp.Remove()
			return nil, fmt.Errorf("%w: %w", ErrWorkspace, err)
		}
	default:
		return nil, fmt.Errorf("%w: unknown isolation %q", ErrWorkspace, iso)
	}
	return w.withTools(ctx, o)
}

// withTools makes o's tools with the host's factory and opens o; on a
// failure o is removed.
func (w *Workspaces) withTools(ctx context.Context, o *openWorkspace) (*openWorkspace, error) {
	tools, closer, err := w.cfg.Tools(ctx, o.ws)
	if err == nil && tools == nil {
		err = errors.New("WorkspaceConfig.Tools returned no resolver")
	}
	if err == nil {
		tools, err = w.confine(tools, o.ws)
	}
	if err != nil {
		if closer != nil {
			_ = closer.Close()
		}
		_ = w.remove(context.WithoutCancel(ctx), o)
		if errors.Is(err, ErrWorkspace) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: the sub-agent's tools: %w", ErrWorkspace, err)
	}
	o.tools, o.closer = tools, closer
	w.mu.Lock()
	w.open[o.ws.AgentID] = o
	w.mu.Unlock()
	return o, nil
}

// copyOptions are the options of a copy made for a call on ctx: the
// limits, and what is left out (PatchDir, Skip, the call's excluded and
// hidden paths, and unless CopyIgnored what .gitignore ignores).
func (w *Workspaces) copyOptions(ctx context.Context) workspace.CopyOptions {
	patchTop, _, _ := strings.Cut(w.cfg.PatchDir, "/")
	sc := llmtoolkit.ScopeFrom(ctx)
	globs := append(append([]string{}, sc.ExcludedPaths...), sc.HiddenPaths...)
	skip := func(rel string) bool {
		if rel == patchTop || (w.cfg.Skip != nil && w.cfg.Skip(rel)) {
			return true
		}
		for _, g := range globs {
			if ok, _ := doublestar.Match(g, rel); ok {
				return true
			}
		}
		return false
	}
	return workspace.CopyOptions{Limits: workspace.Limits{MaxFiles: w.cfg.MaxFiles, MaxBytes: w.cfg.MaxBytes}, Skip: skip, CopyIgnored: w.cfg.CopyIgnored}
}

// sanitize keeps an id usable in a folder and a branch name.
func sanitize(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "agent"
	}
	return string(b[:min(len(b), 64)])
}

// closeTools closes the sub-agent's tools once.
func (o *openWorkspace) closeTools() error {
	var err error
	o.closeOne.Do(func() {
		if o.closer != nil {
			err = o.closer.Close()
		}
	})
	return err
}

// diff returns the workspace's changes.
func (o *openWorkspace) diff(ctx context.Context) (string, error) {
	if o.wt != nil {
		return o.wt.Diff(ctx)
	}
	return o.cp.Diff(ctx)
}

// remove closes the tools, removes the workspace and forgets it.
func (w *Workspaces) remove(ctx context.Context, o *openWorkspace) error {
	err := o.closeTools()
	if o.wt != nil {
		err = errors.Join(err, o.wt.Remove(ctx))
	} else if o.cp != nil {
		err = errors.Join(err, o.cp.Remove())
	}
	if err == nil {
		err = w.reg.Forget(o.dir)
	}
	w.mu.Lock()
	delete(w.open, o.ws.AgentID)
	w.mu.Unlock()
	return err
}

// apply merges o's changes into the parent's tree, one apply at a time.
func (w *Workspaces) apply(ctx context.Context, o *openWorkspace) error {
	w.applyMu.Lock()
	defer w.applyMu.Unlock()
	check := func(ctx context.Context, rel string) error { return writecheck.Check(ctx, rel) }
	if o.wt != nil {
		return o.wt.Apply(ctx, w.cfg.Root, check)
	}
	return o.cp.Apply(ctx, check)
}

// finished is what became of a workspace.
type finished struct {
	outcome   string // applied, kept, discarded, waiting
	conflicts string
	err       error // a failure to do it
}

// do carries out action on o.
func (w *Workspaces) do(ctx context.Context, o *openWorkspace, action WorkspaceAction) finished {
	switch action {
	case ActionApply:
		err := w.apply(ctx, o)
		var ce *workspace.ConflictError
		if errors.As(err, &ce) {
			w.wait(o)
			return finished{outcome: "waiting", conflicts: ce.Error()}
		}
		if err != nil {
			w.wait(o)
			return finished{outcome: "waiting", err: err}
		}
		return finished{outcome: "applied", err: w.remove(context.WithoutCancel(ctx), o)}
	case ActionKeep:
		err := o.closeTools()
		err = errors.Join(err, w.reg.Forget(o.dir))
		w.mu.Lock()
		delete(w.open, o.ws.AgentID)
		w.mu.Unlock()
		return finished{outcome: "kept", err: err}
	case ActionAsk:
		w.wait(o)
		return finished{outcome: "waiting"}
	default:
		return finished{outcome: "discarded", err: w.remove(context.WithoutCancel(ctx), o)}
	}
}

// wait leaves o waiting for a decision.
func (w *Workspaces) wait(o *openWorkspace) {
	w.mu.Lock()
	o.waiting = true
	w.mu.Unlock()
}

// Finish applies, keeps or discards the workspace of sub-agent id, left
// waiting (ActionAsk, or an apply that conflicted): what the
// finish_workspace tool does, for a host that decides later. An apply
// that conflicts returns an error wrapping [ErrWorkspace] that names each
// file, and leaves the workspace waiting.
func (w *Workspaces) Finish(ctx context.Context, id string, action WorkspaceAction) error {
	switch action {
	case ActionApply, ActionKeep, ActionDiscard:
	default:
		return fmt.Errorf("%w: action %q: use apply, keep or discard", ErrWorkspace, action)
	}
	w.mu.Lock()
	o := w.open[id]
	claimed := o != nil && o.waiting
	if claimed {
		o.waiting = false // this call decides; another one waits for it
	}
	w.mu.Unlock()
	if !claimed {
		return fmt.Errorf("%w: no workspace of sub-agent %q waits for a decision; see the ids spawn_agent named", ErrWorkspace, id)
	}
	f := w.do(ctx, o, action)
	if f.conflicts != "" {
		return fmt.Errorf("%w: nothing was applied: %s", ErrWorkspace, f.conflicts)
	}
	return f.err
}

// Close discards every workspace not kept (those still waiting, those of
// sub-agents still running), removes the patch files, and refuses new
// workspaces.
func (w *Workspaces) Close() error {
	w.mu.Lock()
	w.closed = true
	var all []*openWorkspace
	for _, o := range w.open {
		all = append(all, o)
	}
	patches := w.patches
	w.patches = nil
	w.mu.Unlock()
	var errs []error
	for _, o := range all {
		if err := w.remove(context.Background(), o); err != nil {
			errs = append(errs, err)
		}
	}
	if len(patches) > 0 {
		if r, err := os.OpenRoot(w.cfg.Root); err == nil {
			for _, p := range patches {
				if err := r.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
			}
			_ = r.Close()
		}
	}
	return errors.Join(errs...)
}

// writePatch writes patch as PatchDir/ID.patch in the parent's root and
// returns its path relative to the root.
func (w *Workspaces) writePatch(id, patch string) (string, error) {
	r, err := os.OpenRoot(w.cfg.Root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	dir := filepath.FromSlash(w.cfg.PatchDir)
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	top, _, _ := strings.Cut(w.cfg.PatchDir, "/")
	ignore := filepath.Join(top, ".gitignore")
	if _, err := r.Lstat(ignore); errors.Is(err, os.ErrNotExist) {
		_ = r.WriteFile(ignore, []byte("*\n"), 0o644)
	}
	rel := path.Join(w.cfg.PatchDir, sanitize(id)+".patch")
	if err := r.WriteFile(filepath.FromSlash(rel), []byte(patch), 0o644); err != nil {
		return "", err
	}
	w.mu.Lock()
	w.patches = append(w.patches, filepath.FromSlash(rel))
	w.mu.Unlock()
	return rel, nil
}

// finish reads what the sub-agent of o left, decides and does it, and
// fills p; the note is what the model reads of it.
func (w *Workspaces) finish(ctx context.Context, o *openWorkspace, runErr error, abandoned bool, p *SubAgentPayload) string {
	// Cleaning up outlives a cancelled parent, within a bound.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	closeErr := o.closeTools()
	if ctx.Err() != nil || abandoned {
		f := w.do(cctx, o, ActionDiscard)
		p.Outcome = f.outcome
		return w.note(o, "", false, f, closeErr)
	}
	patch, err := o.diff(cctx)
	if err != nil {
		f := w.do(cctx, o, ActionDiscard)
		p.Outcome = f.outcome
		return w.note(o, "", false, finished{outcome: f.outcome, err: errors.Join(fmt.Errorf("its changes could not be read: %w", err), f.err)}, closeErr)
	}
	files := patchFiles(patch)
	p.Files = len(files)
	p.Diff, p.DiffTruncated = capDiff(patch, w.cfg.MaxDiffBytes)
	if patch != "" {
		if rel, err := w.writePatch(o.ws.AgentID, patch); err == nil {
			p.PatchFile = rel
		} else {
			w.cfg.Logger.WarnContext(ctx, "agent: the patch file could not be written", slog.String("agent_id", o.ws.AgentID), slog.Any("error", err))
		}
	}
	action := ActionDiscard
	switch {
	case w.cfg.Decide != nil:
		action = w.decide(ctx, WorkspaceResult{Workspace: o.ws, Diff: p.Diff, Files: files, Err: runErr})
	case w.cfg.ModelDecides:
		action = ActionAsk
	case patch != "":
		action = ActionKeep
	}
	if action == ActionAsk && !w.cfg.ModelDecides {
		action = ActionKeep // no one else to ask
	}
	if patch == "" && action == ActionApply {
		action = ActionDiscard
	}
	f := w.do(cctx, o, action)
	p.Outcome, p.Conflicts = f.outcome, f.conflicts
	return w.note(o, p.PatchFile, true, f, closeErr)
}

// decide asks the host's Decide, a panic discarding.
func (w *Workspaces) decide(ctx context.Context, r WorkspaceResult) (a WorkspaceAction) {
	defer func() {
		if v := recover(); v != nil {
			w.cfg.Logger.ErrorContext(ctx, "agent: WorkspaceConfig.Decide panicked; the workspace is discarded", slog.Any("panic", v))
			a = ActionDiscard
		}
	}()
	return w.cfg.Decide(ctx, r)
}

// note is the line the model reads about a workspace.
func (w *Workspaces) note(o *openWorkspace, patchFile string, read bool, f finished, closeErr error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[workspace of sub-agent %s: isolation %s", o.ws.AgentID, o.ws.Isolation)
	if o.ws.Branch != "" {
		fmt.Fprintf(&b, ", branch %s", o.ws.Branch)
	}
	fmt.Fprintf(&b, ", folder %s", o.ws.Root)
	if o.resumed {
		b.WriteString(", found again after the run resumed")
	}
	if patchFile != "" {
		fmt.Fprintf(&b, "; its changes: %s", patchFile)
	} else if read {
		b.WriteString("; no changes")
	}
	switch f.outcome {
	case "applied":
		b.WriteString("; applied to your tree (uncommitted)")
	case "kept":
		b.WriteString("; kept, not applied")
	case "discarded":
		b.WriteString("; discarded")
	case "waiting":
		if f.conflicts != "" {
			fmt.Fprintf(&b, "; NOT applied, nothing was changed: %s", strings.TrimPrefix(f.conflicts, "workspace: "))
		}
		if f.err != nil {
			fmt.Fprintf(&b, "; NOT applied: %v", f.err)
		}
		if w.cfg.ModelDecides {
			fmt.Fprintf(&b, "; decide with %s (agent_id %q, action apply, keep or discard)", FinishToolName, o.ws.AgentID)
		} else {
			b.WriteString("; waiting for the host's decision")
		}
	}
	if f.err != nil && f.outcome != "waiting" {
		fmt.Fprintf(&b, " (%v)", f.err)
	}
	if closeErr != nil {
		fmt.Fprintf(&b, " (closing its tools: %v)", closeErr)
	}
	b.WriteString("]")
	return b.String()
}

// patchFiles lists the files a git patch changes.
func patchFiles(patch string) []string {
	seen := map[string]bool{}
	var files []string
	for _, line := range strings.Split(patch, "\n") {
		rest, ok := strings.CutPrefix(line, "diff --git a/")
		if !ok {
			continue
		}
		if i := strings.Index(rest, " b/"); i >= 0 {
			f := rest[:i]
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	sort.Strings(files)
	return files
}

// capDiff cuts patch to at most n bytes, on a line end.
func capDiff(patch string, n int) (string, bool) {
	if len(patch) <= n {
		return patch, false
	}
	cut := patch[:n]
	if i := strings.LastIndexByte(cut, '\n'); i >= 0 {
		cut = cut[:i+1]
	}
	return cut, true
}

// finishTool is the finish_workspace tool.
func (w *Workspaces) finishTool() llmtoolkit.Tool {
	return llmtoolkit.MustTool(FinishToolName,
		"Decides on the workspace of a sub-agent that spawn_agent left waiting: apply merges its changes into your tree "+
			"(whole or not at all; conflicts are named file by file), keep leaves its branch or folder for later, discard removes it.",
		map[string]any{
			"type": "object",
			"properties": map[string]any{
				"agent_id": map[string]any{"type": "string", "minLength": 1, "description": "The sub-agent's id, as spawn_agent named it."},
				"action":   map[string]any{"type": "string", "enum": []any{"apply", "keep", "discard"}, "description": "What to do with its workspace."},
			},
			"required":             []any{"agent_id", "action"},
			"additionalProperties": false,
		})
}

// resolveFinish runs a finish_workspace call.
func (w *Workspaces) resolveFinish(ctx context.Context, call llmtoolkit.Call) (string, error) {
	id, _ := call.Arguments["agent_id"].(string)
	action, _ := call.Arguments["action"].(string)
	if err := w.Finish(ctx, id, WorkspaceAction(action)); err != nil {
		return "", err
	}
	switch WorkspaceAction(action) {
	case ActionApply:
		return fmt.Sprintf("The changes of sub-agent %s are applied to your tree (uncommitted); its workspace is removed.", id), nil
	case ActionKeep:
		return fmt.Sprintf("The workspace of sub-agent %s is kept, not applied.", id), nil
	}
	return fmt.Sprintf("The workspace of sub-agent %s is discarded.", id), nil
}

// wsKey marks the context of a sub-agent that works in a workspace.
type wsKey struct{}

// workspaceFrom returns the workspace ctx's agent works in, if any.
func workspaceFrom(ctx context.Context) *openWorkspace {
	o, _ := ctx.Value(wsKey{}).(*openWorkspace)
	return o
}
