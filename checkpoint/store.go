package checkpoint

import (
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"github.com/llmtoolkit/llmtoolkit/internal/snapshot"
	sqlite "github.com/llmtoolkit/llmtoolkit/internal/sqlitegorm"
)

// Checkpoint is one recorded state of a root: a row of the checkpoints
// table. Its tree is content-addressed: the blobs it names are shared
// with every other checkpoint that holds the same files.
type Checkpoint struct {
	// ID is a random UUID.
	ID string `gorm:"column:id;primaryKey;size:36" json:"id"`
	// Root names the folder recorded (its absolute path, or the name the
	// host gave with [WithRootName]).
	Root string `gorm:"column:root;size:1024;index:checkpoints_root_created,priority:1;uniqueIndex:checkpoints_root_key,priority:1" json:"root"`
	// Key makes a checkpoint idempotent: a second Save with the same key
	// in the same root returns the first (a resumed turn has one
	// checkpoint, not two). A checkpoint saved without one has its ID.
	Key string `gorm:"column:key;size:512;uniqueIndex:checkpoints_root_key,priority:2" json:"key,omitempty"`
	// Kind says why it was taken.
	Kind Kind `gorm:"column:kind;size:32" json:"kind"`
	// The attribution, as the audit rows have it (see [Attribution]).
	TenantID       string `gorm:"column:tenant_id;size:64;index:checkpoints_conversation,priority:1" json:"tenant_id,omitempty"`
	ConversationID string `gorm:"column:conversation_id;size:64;index:checkpoints_conversation,priority:2" json:"conversation_id,omitempty"`
	AgentID        string `gorm:"column:agent_id;size:256" json:"agent_id,omitempty"`
	Iteration      int    `gorm:"column:iteration" json:"iteration"`
	CallID         string `gorm:"column:call_id;size:256" json:"call_id,omitempty"`
	// Jobs are the calls whose background jobs ran at some point since
	// the previous checkpoint of the same [Resolver] (running at it, or
	// started since; a job that ended before it is not named): what this
	// checkpoint holds that the previous one lacks may be theirs too.
	Jobs []string `gorm:"column:jobs;serializer:json" json:"jobs,omitempty"`
	// Tree is the hash of the root folder's listing.
	Tree string `gorm:"column:tree;size:64" json:"tree"`
	// Links is the hash of its hard-link groups (the paths that name one
	// file); empty in checkpoints saved before they were recorded, whose
	// rewinds leave hard links as they are.
	Links string `gorm:"column:links;size:64" json:"links,omitempty"`
	// Of is, for a rewind's checkpoints, the checkpoint rewound to.
	Of string `gorm:"column:of;size:36" json:"of,omitempty"`
	// Entries counts the paths recorded; Huge the files recorded by hash
	// and size only.
	Entries int `gorm:"column:entries" json:"entries"`
	Huge    int `gorm:"column:huge" json:"huge"`
	// CreatedAt is when it was saved.
	CreatedAt time.Time `gorm:"column:created_at;index:checkpoints_root_created,priority:2" json:"created_at"`
}

// TableName is the checkpoints table's.
func (Checkpoint) TableName() string { return "checkpoints" }

// Kind says why a checkpoint was taken.
type Kind string

// The kinds of checkpoints.
const (
	KindTurn   Kind = "turn"   // at the start of a turn (the state the turn began with)
	KindCall   Kind = "call"   // before one call, on demand
	KindManual Kind = "manual" // taken by the host
	KindBefore Kind = "before-rewind"
	KindRewind Kind = "rewind" // the state a rewind left
)

// blob is a row of the blobs table: one file's content or one folder's
// listing, DEFLATE-compressed, under the SHA-256 of its bytes.
type blob struct {
	Hash      string    `gorm:"column:hash;primaryKey;size:64"`
	Size      int64     `gorm:"column:size"`
	Data      []byte    `gorm:"column:data"`
	CreatedAt time.Time `gorm:"column:created_at;index"`
}

func (blob) TableName() string { return "checkpoint_blobs" }

// Migrate creates the checkpoints and checkpoint_blobs tables and their
// indexes if missing (SQLite or PostgreSQL; idempotent). They can live in
// the database of the trace table.
func Migrate(db *gorm.DB) error {
	if db == nil {
		return errors.New("checkpoint: Migrate needs a *gorm.DB, got nil")
	}
	if n := db.Dialector.Name(); n != "sqlite" && n != "postgres" {
		return fmt.Errorf("checkpoint: unsupported database %q (use SQLite or PostgreSQL)", n)
	}
	if err := db.AutoMigrate(&Checkpoint{}, &blob{}); err != nil {
		return fmt.Errorf("checkpoint: migrating: %w", err)
	}
	return nil
}

// OpenSQLite opens (creating it 0600 if needed) the SQLite database at
// path, as trace.OpenSQLite does (WAL, synchronous=NORMAL, 10 s busy
// timeout; the WAL and shared-memory files take the database file's
// mode), and migrates the tables.
func OpenSQLite(path string) (*gorm.DB, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("checkpoint: OpenSQLite needs a file path without '?', got %q", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: creating %s: %w", path, err)
	}
	f.Close()
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: opening %s: %w", path, err)
	}
	if err := Migrate(db); err != nil {
		return nil, err
	}
	return db, nil
}

// Store holds checkpoints and their blobs in a SQL database (SQLite or
// PostgreSQL through gorm), bounded ([WithMaxPerConversation],
// [WithMaxTotal], [WithMaxAge]). Several roots may share one Store.
type Store struct {
	db     *gorm.DB
	limits limits
	// gc keeps a collection from deleting the blobs of a checkpoint being
	// saved by this process (they are written before its row).
	gc sync.RWMutex
}

type limits struct {
	perConversation, total int
	age                    time.Duration
	grace                  time.Duration
}

// StoreOption configures a [Store].
type StoreOption func(*limits)

// Default bounds of a [Store].
const (
	DefaultMaxPerConversation = 200
	DefaultMaxTotal           = 10_000
	DefaultMaxAge             = 30 * 24 * time.Hour
)

// WithMaxPerConversation keeps at most n checkpoints of each root and
// conversation (0: no bound; default 200).
func WithMaxPerConversation(n int) StoreOption { return func(l *limits) { l.perConversation = n } }

// WithMaxTotal keeps at most n checkpoints in the store (0: no bound;
// default 10 000).
func WithMaxTotal(n int) StoreOption { return func(l *limits) { l.total = n } }

// WithMaxAge drops checkpoints older than d (0: no bound; default 30
// days).
func WithMaxAge(d time.Duration) StoreOption { return func(l *limits) { l.age = d } }

// WithCollectGrace sets how old an unreferenced blob must be for
// [Store.Collect] to remove it (default ten minutes): a Save running in
// another process writes its blobs before its row.
func WithCollectGrace(d time.Duration) StoreOption { return func(l *limits) { l.grace = d } }

// NewStore returns the store of db, whose tables [Migrate] created.
func NewStore(db *gorm.DB, opts ...StoreOption) (*Store, error) {
	if db == nil {
		return nil, errors.New("checkpoint: NewStore needs a *gorm.DB, got nil")
	}
	l := limits{perConversation: DefaultMaxPerConversation, total: DefaultMaxTotal, age: DefaultMaxAge, grace: 10 * time.Minute}
	for _, o := range opts {
		o(&l)
	}
	return &Store{db: db, limits: l}, nil
}

// blobs is the store seen by the engine.
type blobs struct {
	s *Store
}

var _ snapshot.BatchBlobs = blobs{}

func (b blobs) Has(ctx context.Context, h snapshot.Hash) (bool, error) {
	var n int64
	err := b.s.db.WithContext(ctx).Model(&blob{}).Where("hash = ?", h.String()).Limit(1).Count(&n).Error
	if err != nil {
		return false, fmt.Errorf("checkpoint: reading the store: %w", err)
	}
	return n > 0, nil
}

// writers pools the DEFLATE writers (each holds about a megabyte of
// state: one per blob would be most of a small blob's cost).
var writers = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.DefaultCompression)
	return w
}}

func compress(data []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(data)/3 + 64)
	w := writers.Get().(*flate.Writer)
	w.Reset(&buf)
	_, _ = w.Write(data)
	_ = w.Close()
	writers.Put(w)
	return buf.Bytes()
}

func (b blobs) Put(ctx context.Context, h snapshot.Hash, data []byte) error {
	row := blob{Hash: h.String(), Size: int64(len(data)), Data: compress(data), CreatedAt: time.Now().UTC()}
	err := b.s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("checkpoint: writing the store: %w", err)
	}
	return nil
}

// Missing returns those of hs the store does not hold: one query.
func (b blobs) Missing(ctx context.Context, hs []snapshot.Hash) ([]snapshot.Hash, error) {
	keys := make([]string, len(hs))
	for i, h := range hs {
		keys[i] = h.String()
	}
	var held []string
	if err := b.s.db.WithContext(ctx).Model(&blob{}).Where("hash IN ?", keys).Pluck("hash", &held).Error; err != nil {
		return nil, fmt.Errorf("checkpoint: reading the store: %w", err)
	}
	have := make(map[string]struct{}, len(held))
	for _, h := range held {
		have[h] = struct{}{}
	}
	var out []snapshot.Hash
	for i, h := range hs {
		if _, ok := have[keys[i]]; !ok {
			out = append(out, h)
		}
	}
	return out, nil
}

// PutMany compresses the blobs and writes them in one transaction.
func (b blobs) PutMany(ctx context.Context, list []snapshot.Blob) error {
	now := time.Now().UTC()
	rows := make([]blob, len(list))
	for i, x := range list {
		rows[i] = blob{Hash: x.Hash.String(), Size: int64(len(x.Data)), Data: compress(x.Data), CreatedAt: now}
	}
	err := b.s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(rows, 100).Error
	if err != nil {
		return fmt.Errorf("checkpoint: writing the store: %w", err)
	}
	return nil
}

// GetMany reads the blobs hs in one query.
func (b blobs) GetMany(ctx context.Context, hs []snapshot.Hash) (map[snapshot.Hash][]byte, error) {
	keys := make([]string, len(hs))
	for i, h := range hs {
		keys[i] = h.String()
	}
	var rows []blob
	if err := b.s.db.WithContext(ctx).Where("hash IN ?", keys).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("checkpoint: reading the store: %w", err)
	}
	out := make(map[snapshot.Hash][]byte, len(rows))
	for _, row := range rows {
		h, err := snapshot.ParseHash(row.Hash)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: blob %q is damaged in the store", row.Hash)
		}
		data, err := inflate(row)
		if err != nil {
			return nil, err
		}
		out[h] = data
	}
	return out, nil
}

// inflate decompresses a blob row, checking its size.
// readers pools the DEFLATE readers (each holds tens of kilobytes of
// tables).
var readers sync.Pool

// inflate returns the content of row: exactly row.Size bytes, read into
// one buffer of that size, or an error if the stream holds more or less.
func inflate(row blob) ([]byte, error) {
	src := bytes.NewReader(row.Data)
	fr, _ := readers.Get().(io.ReadCloser)
	if fr == nil {
		fr = flate.NewReader(src)
	} else if err := fr.(flate.Resetter).Reset(src, nil); err != nil {
		return nil, fmt.Errorf("checkpoint: blob %s is damaged in the store", row.Hash)
	}
	defer readers.Put(fr)
	if row.Size < 0 || row.Size > int64(len(row.Data))*1032+64 { // DEFLATE expands at most 1032:1
		return nil, fmt.Errorf("checkpoint: blob %s is damaged in the store", row.Hash)
	}
	data := make([]byte, row.Size)
	if _, err := io.ReadFull(fr, data); err != nil {
		return nil, fmt.Errorf("checkpoint: blob %s is damaged in the store", row.Hash)
	}
	var one [1]byte
	if n, err := fr.Read(one[:]); n != 0 || (err != io.EOF && err != nil) {
		return nil, fmt.Errorf("checkpoint: blob %s is damaged in the store", row.Hash)
	}
	return data, nil
}

func (b blobs) Get(ctx context.Context, h snapshot.Hash) ([]byte, error) {
	var row blob
	err := b.s.db.WithContext(ctx).Where("hash = ?", h.String()).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, fmt.Errorf("%w: %s", snapshot.ErrMissingBlob, h)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading the store: %w", err)
	}
	return inflate(row)
}
