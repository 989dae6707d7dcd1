package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/snapshot"
)

// ErrNotFound is wrapped by the error for a checkpoint the store does not
// hold (for this root).
var ErrNotFound = errors.New("checkpoint: no such checkpoint")

// ErrDenied is wrapped by the error of a rewind that would write where
// the host does not allow it: nothing was written.
var ErrDenied = snapshot.ErrDenied

// ErrTooLarge is wrapped by the error for a tree past the bounds
// ([WithMaxEntries], [WithMaxDepth]).
var ErrTooLarge = snapshot.ErrTooLarge

// Attribution names who a checkpoint belongs to, as the audit rows do.
type Attribution struct {
	TenantID, ConversationID, AgentID string
	Iteration                         int
	CallID                            string
	// Jobs are the calls whose background jobs ran since the previous
	// checkpoint ([Checkpoint].Jobs; [Resolver] sets them).
	Jobs []string
}

// Session map keys read by [AttributionFrom]: trace's (SessionTenantID,
// SessionConversationID, SessionIteration).
const (
	SessionTenantID       = "tenant_id"
	SessionConversationID = "conversation_id"
	SessionIteration      = "iteration"
)

type attributionKey struct{}

// WithAttribution returns a context whose checkpoints are attributed to a.
func WithAttribution(ctx context.Context, a Attribution) context.Context {
	return context.WithValue(ctx, attributionKey{}, a)
}

// AttributionFrom reads a checkpoint's attribution from ctx: the one set by
// [WithAttribution], else the tenant and conversation of the session map
// (the keys trace reads), the iteration ([llmtoolkit.Scope].Iteration, else
// the session's) and the agent ([llmtoolkit.Scope].AgentID).
func AttributionFrom(ctx context.Context) Attribution {
	if a, ok := ctx.Value(attributionKey{}).(Attribution); ok {
		return a
	}
	var a Attribution
	if s := llmtoolkit.ScopeFrom(ctx).Session; s != nil {
		a.TenantID = text(s[SessionTenantID])
		a.ConversationID = text(s[SessionConversationID])
		if n, ok := s[SessionIteration].(int); ok {
			a.Iteration = n
		}
	}
	if n, ok := llmtoolkit.ScopeFrom(ctx).Iteration, llmtoolkit.ScopeFrom(ctx).Iteration > 0; ok {
		a.Iteration = n
	}
	a.AgentID = llmtoolkit.ScopeFrom(ctx).AgentID
	return a
}

func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	}
	return ""
}

// Checkpointer takes and rewinds the checkpoints of one root.
type Checkpointer struct {
	store  *Store
	engine *snapshot.Engine
	name   string
	allow  func(ctx context.Context, path string) error
	tracer Tracer
}

// Option configures a [Checkpointer].
type Option func(*config)

type config struct {
	engine snapshot.Options
	name   string
	allow  func(ctx context.Context, path string) error
	tracer Tracer
}

// WithRootName names the root in the store (default: its absolute path).
// Two Checkpointers of one name share their checkpoints.
func WithRootName(name string) Option { return func(c *config) { c.name = name } }

// WithMaxFileBytes records files larger than n by hash and size only (a
// rewind says it cannot restore them); default 16 MiB.
func WithMaxFileBytes(n int64) Option { return func(c *config) { c.engine.MaxBlobBytes = n } }

// WithMaxEntries bounds the paths of the tree (default 1 Mi); a larger
// tree is an error wrapping [ErrTooLarge].
func WithMaxEntries(n int) Option { return func(c *config) { c.engine.MaxEntries = n } }

// WithMaxDepth bounds how deep folders nest (default 256).
func WithMaxDepth(n int) Option { return func(c *config) { c.engine.MaxDepth = n } }

// WithExcluded leaves out the root-relative, slash-separated paths for
// which excluded is true (build outputs, node_modules when no .gitignore
// names them): never read, never rewound.
func WithExcluded(excluded func(rel string) bool) Option {
	return func(c *config) { c.engine.Excluded = excluded }
}

// WithAllow asks allow, with the rewind's context, before a rewind
// writes the root-relative path (package agent's deny rules plug in here
// through [AllowThrough]): one error refuses the whole rewind, and
// nothing is written.
func WithAllow(allow func(ctx context.Context, path string) error) Option {
	return func(c *config) { c.allow = allow }
}

// WithIgnoreFilesRecorded records what .gitignore files ignore too.
func WithIgnoreFilesRecorded() Option { return func(c *config) { c.engine.NoIgnoreFiles = true } }

// New returns the Checkpointer of the folder root, recording into s.
func New(s *Store, root string, opts ...Option) (*Checkpointer, error) {
	if s == nil {
		return nil, errors.New("checkpoint: New needs a *Store, got nil")
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	e, err := snapshot.New(root, c.engine)
	if err != nil {
		return nil, err
	}
	name := c.name
	if name == "" {
		name = e.Root()
	}
	return &Checkpointer{store: s, engine: e, name: name, allow: c.allow, tracer: c.tracer}, nil
}

// Root returns the folder recorded.
func (c *Checkpointer) Root() string { return c.engine.Root() }

// Save records the root now as a checkpoint of kind k, attributed from
// ctx ([AttributionFrom]). With a non-empty key, a second Save with the
// same key (a resumed turn) returns the first checkpoint and records
// nothing. The blobs are written before the row, so a process killed in
// between leaves at worst blobs no checkpoint names, which [Store.Collect]
// removes.
func (c *Checkpointer) Save(ctx context.Context, k Kind, key string) (cp Checkpoint, err error) {
	ctx, end := c.start(ctx, "save")
	var snap snapshot.Snapshot
	defer func() {
		end(Outcome{ID: cp.ID, Kind: k, Entries: cp.Entries, Hashed: snap.Hashed, StoredBytes: snap.StoredBytes, Err: err})
	}()
	c.store.gc.RLock()
	defer c.store.gc.RUnlock()
	if key != "" {
		if cp, err := c.byKey(ctx, key); err == nil {
			return cp, nil
		} else if !errors.Is(err, ErrNotFound) {
			return Checkpoint{}, err
		}
	}
	snap, err = c.engine.Scan(ctx, blobs{c.store})
	if err != nil {
		return Checkpoint{}, err
	}
	cp, err = c.insert(ctx, k, key, "", snap)
	if err != nil && cp.ID == "" {
		// No checkpoint names the blobs the scan wrote, so a collection may
		// remove them: the next scan must not trust its index.
		c.engine.Reset()
	}
	return cp, err
}

func (c *Checkpointer) insert(ctx context.Context, k Kind, key, of string, snap snapshot.Snapshot) (Checkpoint, error) {
	a := AttributionFrom(ctx)
	id := uuid.NewString()
	if key == "" {
		key = id
	}
	cp := Checkpoint{
		ID: id, Root: c.name, Key: key, Kind: k,
		TenantID: a.TenantID, ConversationID: a.ConversationID, AgentID: a.AgentID, Iteration: a.Iteration, CallID: a.CallID, Jobs: a.Jobs,
		Tree: snap.Tree.String(), Of: of, Entries: snap.Entries, Huge: len(snap.Huge),
		Links:     linksOf(snap),
		CreatedAt: time.Now().UTC(),
	}
	res := c.store.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&cp)
	if res.Error != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: saving: %w", res.Error)
	}
	if res.RowsAffected == 0 { // a racing Save with the same key won
		return c.byKey(ctx, key)
	}
	if err := c.store.prune(ctx, cp); err != nil {
		return cp, err
	}
	return cp, nil
}

func linksOf(snap snapshot.Snapshot) string {
	if snap.Links.IsZero() {
		return ""
	}
	return snap.Links.String()
}

func (c *Checkpointer) byKey(ctx context.Context, key string) (Checkpoint, error) {
	var cp Checkpoint
	err := c.store.db.WithContext(ctx).Where("root = ? AND key = ?", c.name, key).Take(&cp).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return cp, fmt.Errorf("%w: key %q", ErrNotFound, key)
	}
	if err != nil {
		return cp, fmt.Errorf("checkpoint: reading: %w", err)
	}
	return cp, nil
}

// Get returns the checkpoint id of this root.
func (c *Checkpointer) Get(ctx context.Context, id string) (Checkpoint, error) {
	var cp Checkpoint
	err := c.store.db.WithContext(ctx).Where("root = ? AND id = ?", c.name, id).Take(&cp).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return cp, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return cp, fmt.Errorf("checkpoint: reading: %w", err)
	}
	return cp, nil
}

// Filter narrows [Checkpointer.List].
type Filter struct {
	// ConversationID, when set, keeps that conversation's checkpoints.
	ConversationID string
	// Limit bounds the list (0 or more than 1000: 1000), newest first.
	Limit int
}

// List returns the checkpoints of this root, newest first.
func (c *Checkpointer) List(ctx context.Context, f Filter) ([]Checkpoint, error) {
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	q := c.store.db.WithContext(ctx).Where("root = ?", c.name)
	if f.ConversationID != "" {
		q = q.Where("conversation_id = ?", f.ConversationID)
	}
	var out []Checkpoint
	if err := q.Order("created_at DESC, id").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("checkpoint: listing: %w", err)
	}
	return out, nil
}

// Change is one path that differs between two checkpoints.
type Change struct {
	Path string `json:"path"`
	// Op is "added", "removed", "modified" (content, link target or
	// type), "mode" (permission bits, maybe owner or time too) or "meta"
	// (owner or modification time only: a file written again with the
	// same bytes).
	Op string `json:"op"`
	// Kind is the kind of the entry after the change (before it, for a
	// removal): "file", "folder", "symbolic link", ...
	Kind string `json:"kind"`
	// OldMode and NewMode are the permission bits, octal ("0644"); empty
	// where the path is absent.
	OldMode string `json:"oldMode"`
	NewMode string `json:"newMode"`
	// OldSize and NewSize are a file's sizes.
	OldSize int64 `json:"oldSize"`
	NewSize int64 `json:"newSize"`
}

func changeOf(s snapshot.Change) Change {
	ch := Change{Path: s.Path, Op: string(s.Op), OldSize: s.Old.Size, NewSize: s.New.Size}
	k := s.New.Kind
	if k == 0 {
		k = s.Old.Kind
	}
	ch.Kind = k.String()
	if s.Old.Kind != 0 {
		ch.OldMode = fmt.Sprintf("%04o", s.Old.Mode)
	}
	if s.New.Kind != 0 {
		ch.NewMode = fmt.Sprintf("%04o", s.New.Mode)
	}
	return ch
}

// MaxDiffChanges bounds the changes a diff lists.
const MaxDiffChanges = 10_000

// Diff lists the changes from checkpoint from to checkpoint to, a folder
// before what it holds, at most [MaxDiffChanges] (truncated says so).
func (c *Checkpointer) Diff(ctx context.Context, from, to string) (changes []Change, truncated bool, err error) {
	a, err := c.Get(ctx, from)
	if err != nil {
		return nil, false, err
	}
	b, err := c.Get(ctx, to)
	if err != nil {
		return nil, false, err
	}
	return c.diffTrees(ctx, a.Tree, b.Tree)
}

func (c *Checkpointer) diffTrees(ctx context.Context, from, to string) ([]Change, bool, error) {
	fh, err := snapshot.ParseHash(from)
	if err != nil {
		return nil, false, err
	}
	th, err := snapshot.ParseHash(to)
	if err != nil {
		return nil, false, err
	}
	list, truncated, err := snapshot.Diff(ctx, blobs{c.store}, fh, th, MaxDiffChanges)
	if err != nil {
		return nil, false, err
	}
	out := make([]Change, len(list))
	for i, s := range list {
		out[i] = changeOf(s)
	}
	return out, truncated, nil
}

// RewindOptions control a [Checkpointer.Rewind].
type RewindOptions struct {
	// DryRun returns the changes without writing or recording anything.
	DryRun bool
	// Allow, when set, is asked for each path beside the Checkpointer's
	// own [WithAllow].
	Allow func(ctx context.Context, path string) error
}

// Rewound is what a rewind did.
type Rewound struct {
	// To is the checkpoint rewound to.
	To Checkpoint `json:"to"`
	// Before is the checkpoint of the state the rewind replaced: rewind
	// to it to undo the rewind. After is the state the rewind left. Both
	// are empty for a dry run.
	Before Checkpoint `json:"before"`
	After  Checkpoint `json:"after"`
	// Changes are those from the state before to the checkpoint.
	Changes []Change `json:"changes"`
	// Skipped lists what could not be restored, and why.
	Skipped []Skipped `json:"skipped"`
	// Exact reports that the root is now exactly the checkpoint's tree.
	Exact bool `json:"exact"`
}

// Rewind puts the root back as checkpoint to recorded it: contents,
// modes, links, pipes, folders; files the checkpoint lacks are removed,
// those it holds are restored. The state it replaces is recorded first
// (Rewound.Before, kind before-rewind: rewinding to it undoes the
// rewind) and the state it leaves after (kind rewind). Every change is
// asked of the host's Allow before anything is written; a dry run lists
// the changes and writes nothing.
func (c *Checkpointer) Rewind(ctx context.Context, to string, opts RewindOptions) (res Rewound, err error) {
	ctx, end := c.start(ctx, "rewind")
	defer func() {
		end(Outcome{ID: to, Kind: res.To.Kind, Entries: res.To.Entries, Changes: len(res.Changes), Skipped: len(res.Skipped), DryRun: opts.DryRun, Err: err})
	}()
	c.store.gc.RLock()
	defer c.store.gc.RUnlock()
	target, err := c.Get(ctx, to)
	if err != nil {
		return Rewound{}, err
	}
	th, err := snapshot.ParseHash(target.Tree)
	if err != nil {
		return Rewound{}, err
	}
	var links snapshot.Hash
	if target.Links != "" {
		if links, err = snapshot.ParseHash(target.Links); err != nil {
			return Rewound{}, err
		}
	}
	res = Rewound{To: target}
	r, err := c.engine.Restore(ctx, blobs{c.store}, th, snapshot.RestoreOptions{
		DryRun:     opts.DryRun,
		MaxChanges: 0,
		Links:      links,
		Allow: func(ch snapshot.Change) error {
			for _, allow := range []func(context.Context, string) error{c.allow, opts.Allow} {
				if allow != nil {
					if err := allow(ctx, ch.Path); err != nil {
						return err
					}
				}
			}
			return nil
		},
	})
	for _, s := range r.Changes {
		res.Changes = append(res.Changes, changeOf(s))
	}
	if err != nil {
		if r.Before.Tree.IsZero() || errors.Is(err, snapshot.ErrDenied) {
			return res, err
		}
	}
	if opts.DryRun {
		res.Exact = r.Exact
		return res, err
	}
	before, ierr := c.insert(ctx, KindBefore, "", target.ID, r.Before)
	if ierr != nil {
		c.engine.Reset()
		return res, errors.Join(err, ierr)
	}
	res.Before = before
	if err != nil {
		return res, fmt.Errorf("%w (the state before the rewind is checkpoint %s)", err, before.ID)
	}
	after, err := c.insert(ctx, KindRewind, "", target.ID, r.After)
	if err != nil {
		c.engine.Reset()
		return res, err
	}
	res.After, res.Exact = after, r.Exact
	for _, s := range r.Skipped {
		res.Skipped = append(res.Skipped, Skipped(s))
	}
	return res, nil
}

// Skipped is a path a rewind could not restore: a file over the size
// bound (recorded by hash and size only), a device or socket, a folder
// that still holds ignored files.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}
