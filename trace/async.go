package trace

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Close ends recording: with [WithAsync] it flushes every queued trace and
// waits for the writer goroutine to end. It returns an error counting the
// traces that could not be written so far, synchronously or not, if any
// (each was already logged and given to [WithOnError]), wrapping the first
// failure. Calls resolved after Close are still recorded, with synchronous
// writes. Close is idempotent.
func (rec *Recorder) Close() error {
	if rec.queue != nil {
		rec.mu.Lock()
		if !rec.closed {
			rec.closed = true
			close(rec.queue)
		}
		rec.mu.Unlock()
		<-rec.done
	}
	rec.failMu.Lock()
	defer rec.failMu.Unlock()
	if rec.failures > 0 {
		return fmt.Errorf("trace: %d trace(s) could not be written; the first failure: %w", rec.failures, rec.firstErr)
	}
	return nil
}

// sqliteRowsPerInsert caps the rows of one INSERT statement on SQLite:
// DefaultBatchSize's, 7,500 parameters (SQLite allows 32,766).
const sqliteRowsPerInsert = 500

// queued is a trace waiting for the async writer, with its table.
type queued struct {
	t     *Trace
	table table
}

// run is the async writer: it gathers traces into batches of up to
// WithBatchSize, waiting at most WithFlushInterval for a batch to fill, and inserts
// each batch's traces, table by table, in one statement per table. It ends
// when the queue is closed and empty.
func (rec *Recorder) run() {
	defer close(rec.done)
	batch := make([]queued, 0, rec.cfg.batchSize)
	var w batchWriter
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
		w.flushGuarded(rec, batch)
		clear(batch)
		batch = batch[:0]
		if !open {
			return
		}
	}
}

// batchWriter groups a batch's traces by table; its buffers are reused
// from batch to batch.
type batchWriter struct {
	traces []*Trace
	tables []table    // the batch's tables, in order of first appearance
	groups [][]*Trace // the traces of each table
}

// flushGuarded writes a batch. A panic while writing does not end the
// writer, which serves the Recorder until Close: a database call's panic is
// an error of the rows it wrote (dbGuarded); any other counts the batch's
// rows as failed writes, each logged and given to WithOnError (whose own panic
// report rescues), and the next batch is written as usual.
func (w *batchWriter) flushGuarded(rec *Recorder, batch []queued) {
	defer func() {
		if v := recover(); v != nil {
			err := fmt.Errorf("trace: writing a batch of %d trace(s) panicked: %v", len(batch), v)
			for _, q := range batch {
				rec.lost(q.t, err)
			}
		}
	}()
	w.flush(rec, batch)
}

// flush writes a batch, one insert per table.
func (w *batchWriter) flush(rec *Recorder, batch []queued) {
	first := batch[0].table
	same := true
	for _, q := range batch[1:] {
		if q.table != first {
			same = false
			break
		}
	}
	if same { // the usual case: one table
		w.traces = w.traces[:0]
		for _, q := range batch {
			w.traces = append(w.traces, q.t)
		}
		rec.flush(first, w.traces)
		clear(w.traces)
		return
	}
	w.tables = w.tables[:0]
	for _, q := range batch {
		i := slices.Index(w.tables, q.table)
		if i < 0 {
			i = len(w.tables)
			w.tables = append(w.tables, q.table)
			if i < len(w.groups) {
				w.groups[i] = w.groups[i][:0]
			} else {
				w.groups = append(w.groups, nil)
			}
		}
		w.groups[i] = append(w.groups[i], q.t)
	}
	for i, tbl := range w.tables {
		rec.flush(tbl, w.groups[i])
		clear(w.groups[i])
	}
}

// flush inserts traces into tbl in one transaction, at most rowsPerInsert
// rows per statement (on SQLite, statements of a few row counts: chunks);
// if that fails, it inserts them one by one so that one
// bad trace does not lose the others, and reports those that still fail.
// The whole batch, retries included, has one write timeout: a database that
// hangs costs one timeout per batch, never one per row, so Close ends in
// bounded time.
func (rec *Recorder) flush(tbl table, batch []*Trace) {
	ctx, cancel := context.WithTimeout(context.Background(), rec.cfg.writeTimeout)
	defer cancel()
	if rec.db != nil {
		var skipped int
		err := dbGuarded(rec.batch, func() (err error) {
			if len(batch) <= rec.rowsPerInsert && (!rec.sqlite || oneChunk(len(batch), rec.rowsPerInsert)) {
				skipped, err = rec.inserts.exec(ctx, rec.batch, tbl, batch) // one statement: atomic as it is
				return err
			}
			skipped, err = rec.inserts.execBatch(ctx, rec.batch, tbl, batch, rec.rowsPerInsert, rec.sqlite)
			return err
		})
		if err == nil {
			if skipped > 0 {
				var t *Trace
				if len(batch) == 1 {
					t = batch[0]
				}
				rec.skipped(ctx, tbl, skipped, t)
			}
			return
		}
	}
	for _, t := range batch {
		err := ctx.Err()
		if err != nil {
			err = fmt.Errorf("trace: writing the trace of %q to %s: the batch's write timeout (%s) passed: %w", t.ToolName, tbl, rec.cfg.writeTimeout, err)
		} else {
			_, err = rec.insert(ctx, tbl, t)
		}
		if err != nil {
			rec.lost(t, err)
		}
	}
}

// lost counts, logs and reports a queued trace that could not be written;
// Close returns the first such error.
func (rec *Recorder) lost(t *Trace, err error) { rec.fail(context.Background(), t, err) }

// fail counts, logs and reports a trace that could not be written, and
// keeps the first such error for Close.
func (rec *Recorder) fail(ctx context.Context, t *Trace, err error) {
	rec.failed.Add(1)
	rec.report(ctx, t, err)
	rec.failMu.Lock()
	if rec.failures == 0 {
		rec.firstErr = err
	}
	rec.failures++
	rec.failMu.Unlock()
}
