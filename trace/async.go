package trace

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Close stops recording asynchronously: it flushes every queued trace,
// waits for the writer goroutine to end, and returns an error counting the
// traces that could not be written, if any (each was already logged and
// given to [OnError]). Calls resolved after Close are still recorded, with
// synchronous writes. Close is idempotent and returns nil for a synchronous
// recorder.
func (rec *Recorder) Close() error {
	if rec.queue == nil {
		return nil
	}
	rec.mu.Lock()
	if !rec.closed {
		rec.closed = true
		close(rec.queue)
	}
	rec.mu.Unlock()
	<-rec.done
	rec.failMu.Lock()
	defer rec.failMu.Unlock()
	if rec.failures > 0 {
		return fmt.Errorf("trace: %d queued trace(s) could not be written; the first failure: %w", rec.failures, rec.firstErr)
	}
	return nil
}

// sqliteRowsPerInsert caps the rows of one INSERT statement on SQLite.
const sqliteRowsPerInsert = 100

// run is the async writer: it gathers traces into batches of up to
// BatchSize, waiting at most FlushInterval for a batch to fill, and inserts
// each batch in one statement. It ends when the queue is closed and empty.
func (rec *Recorder) run() {
	defer close(rec.done)
	batch := make([]*Trace, 0, rec.cfg.batchSize)
	timer := time.NewTimer(rec.cfg.flushInterval)
	timer.Stop()
	for {
		t, ok := <-rec.queue
		if !ok {
			return
		}
		batch = append(batch, t)
		open := true
		timer.Reset(rec.cfg.flushInterval)
	fill:
		for len(batch) < rec.cfg.batchSize {
			select {
			case t, ok := <-rec.queue:
				if !ok {
					open = false
					break fill
				}
				batch = append(batch, t)
			case <-timer.C:
				break fill
			}
		}
		timer.Stop()
		rec.flush(batch)
		clear(batch)
		batch = batch[:0]
		if !open {
			return
		}
	}
}

// flush inserts a batch in one transaction; if that fails, it inserts the
// traces one by one so that one bad trace does not lose the others, and
// reports those that still fail.
func (rec *Recorder) flush(batch []*Trace) {
	if rec.db != nil {
		ctx, cancel := context.WithTimeout(context.Background(), rec.cfg.writeTimeout)
		db := rec.batch.WithContext(ctx)
		var err error
		if len(batch) <= rec.rowsPerInsert {
			err = db.Create(batch).Error // one statement: atomic as it is
		} else {
			err = db.Transaction(func(tx *gorm.DB) error {
				return tx.CreateInBatches(batch, rec.rowsPerInsert).Error
			})
		}
		cancel()
		if err == nil {
			return
		}
	}
	for _, t := range batch {
		if err := rec.insert(context.Background(), t); err != nil {
			rec.failed.Add(1)
			rec.report(context.Background(), t, err)
			rec.failMu.Lock()
			if rec.failures == 0 {
				rec.firstErr = err
			}
			rec.failures++
			rec.failMu.Unlock()
		}
	}
}
