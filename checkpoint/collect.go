package checkpoint

import (
	"context"
	"fmt"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/snapshot"
)

// prune drops the checkpoints past the store's bounds after cp was saved:
// the oldest of cp's root and conversation past WithMaxPerConversation,
// the oldest of the store past WithMaxTotal, every one older than
// WithMaxAge. The newest checkpoint of a root is never dropped. Their
// blobs stay until [Store.Collect].
func (s *Store) prune(ctx context.Context, cp Checkpoint) error {
	db := s.db.WithContext(ctx)
	drop := func(q func() ([]string, error)) error {
		ids, err := q()
		if err != nil || len(ids) == 0 {
			return err
		}
		return db.Where("id IN ? AND id <> ?", ids, cp.ID).Delete(&Checkpoint{}).Error
	}
	oldest := func(where string, args []any, keep int) func() ([]string, error) {
		return func() ([]string, error) {
			var n int64
			if err := db.Model(&Checkpoint{}).Where(where, args...).Count(&n).Error; err != nil {
				return nil, err
			}
			if int(n) <= keep {
				return nil, nil
			}
			var ids []string
			err := db.Model(&Checkpoint{}).Where(where, args...).Order("created_at, id").Limit(int(n)-keep).Pluck("id", &ids).Error
			return ids, err
		}
	}
	if s.limits.perConversation > 0 {
		if err := drop(oldest("root = ? AND conversation_id = ?", []any{cp.Root, cp.ConversationID}, s.limits.perConversation)); err != nil {
			return fmt.Errorf("checkpoint: pruning: %w", err)
		}
	}
	if s.limits.total > 0 {
		if err := drop(oldest("1 = 1", nil, s.limits.total)); err != nil {
			return fmt.Errorf("checkpoint: pruning: %w", err)
		}
	}
	if s.limits.age > 0 {
		if err := db.Where("created_at < ? AND id <> ?", time.Now().UTC().Add(-s.limits.age), cp.ID).Delete(&Checkpoint{}).Error; err != nil {
			return fmt.Errorf("checkpoint: pruning: %w", err)
		}
	}
	return nil
}

// Collected is what a collection removed.
type Collected struct {
	Blobs int   `json:"blobs"`
	Bytes int64 `json:"bytes"` // stored (compressed) bytes
}

// Collect removes the blobs that no checkpoint names any more (dropped by
// the bounds, or written by a Save that never finished: a process killed
// mid-turn), older than ten minutes, so that a Save in progress in another
// process keeps its own. It marks every blob reachable from the remaining
// checkpoints' trees (each listing read once) and their hard-link groups,
// and sweeps the rest. Saves
// and rewinds of this Store wait for it.
func (s *Store) Collect(ctx context.Context) (Collected, error) {
	s.gc.Lock()
	defer s.gc.Unlock()
	var out Collected
	db := s.db.WithContext(ctx)
	var trees []string
	if err := db.Model(&Checkpoint{}).Distinct("tree").Pluck("tree", &trees).Error; err != nil {
		return out, fmt.Errorf("checkpoint: collecting: %w", err)
	}
	live := map[snapshot.Hash]struct{}{}
	b := blobs{s}
	var mark func(h snapshot.Hash) error
	mark = func(h snapshot.Hash) error {
		if _, ok := live[h]; ok {
			return nil
		}
		live[h] = struct{}{}
		entries, err := snapshot.ReadTree(ctx, b, h)
		if err != nil {
			return err
		}
		for _, e := range entries {
			switch {
			case e.Kind == snapshot.KindDir:
				if err := mark(e.Hash); err != nil {
					return err
				}
			case e.Kind == snapshot.KindFile && !e.Huge:
				live[e.Hash] = struct{}{}
			}
		}
		return nil
	}
	for _, t := range trees {
		h, err := snapshot.ParseHash(t)
		if err != nil {
			return out, err
		}
		if err := mark(h); err != nil {
			return out, fmt.Errorf("checkpoint: collecting: %w", err)
		}
	}
	var links []string
	if err := db.Model(&Checkpoint{}).Where("links <> ''").Distinct("links").Pluck("links", &links).Error; err != nil {
		return out, fmt.Errorf("checkpoint: collecting: %w", err)
	}
	for _, l := range links {
		h, err := snapshot.ParseHash(l)
		if err != nil {
			return out, err
		}
		live[h] = struct{}{} // the hard-link groups
	}
	cutoff := time.Now().UTC().Add(-s.limits.grace)
	type row struct {
		Hash string
		N    int64
	}
	last := ""
	for {
		var rows []row
		err := db.Model(&blob{}).Select("hash, length(data) AS n").
			Where("hash > ? AND created_at < ?", last, cutoff).Order("hash").Limit(1000).Scan(&rows).Error
		if err != nil {
			return out, fmt.Errorf("checkpoint: collecting: %w", err)
		}
		if len(rows) == 0 {
			return out, nil
		}
		var dead []string
		for _, r := range rows {
			h, err := snapshot.ParseHash(r.Hash)
			if _, ok := live[h]; err == nil && ok {
				continue
			}
			dead = append(dead, r.Hash)
			out.Blobs++
			out.Bytes += r.N
		}
		if len(dead) > 0 {
			if err := db.Where("hash IN ?", dead).Delete(&blob{}).Error; err != nil {
				return out, fmt.Errorf("checkpoint: collecting: %w", err)
			}
		}
		last = rows[len(rows)-1].Hash
		if err := ctx.Err(); err != nil {
			return out, err
		}
	}
}
