package trace

import (
	"context"
	"sync/atomic"
	"time"
)

// A synchronous write on SQLite is bounded by the database itself when
// nothing in it can wait longer than the write timeout: the pool opens as
// many connections as are asked for (no SetMaxOpenConns: taking one never
// waits), and a locked database is waited for at most its busy timeout,
// no longer than the write timeout (OpenSQLite's is 10 s, the default
// timeout). Such a write is given a context that never ends instead of the
// timeout's: with a context that can end, the pure-Go driver starts a
// goroutine per statement to interrupt it and installs a progress handler,
// which cost more than the rest of the Recorder's work on the row, and a
// one-row INSERT that does not wait for a lock ends in microseconds anyway.
// Otherwise (a pool of bounded size, a longer busy timeout, one that
// cannot be read) the write has the timeout's context, as on PostgreSQL.
// The busy timeout is read once, from one connection of the pool (the DSN's
// _pragma gives every connection the same).

// busyUnknown marks a busy timeout not read yet; busyUnreadable one whose
// read failed.
const (
	busyUnknown    = -1
	busyUnreadable = -2
)

// sqliteBusy is the busy timeout of a Recorder's SQLite pool, in
// milliseconds, or busyUnknown, busyUnreadable.
type sqliteBusy struct{ ms atomic.Int64 }

// sqliteBounded reports whether a synchronous write can go without the
// write timeout's context (see above).
func (rec *Recorder) sqliteBounded(ctx context.Context) bool {
	if !rec.sqlite || rec.db == nil {
		return false
	}
	sqlDB, err := rec.db.DB()
	if err != nil || sqlDB.Stats().MaxOpenConnections != 0 {
		return false
	}
	ms := rec.busy.ms.Load()
	if ms == busyUnknown {
		ms = rec.readBusyTimeout(ctx)
	}
	return ms >= 0 && time.Duration(ms)*time.Millisecond <= rec.cfg.writeTimeout
}

// readBusyTimeout reads and keeps the pool's busy timeout.
func (rec *Recorder) readBusyTimeout(ctx context.Context) int64 {
	ctx, cancel := context.WithTimeout(ctx, rec.cfg.writeTimeout)
	defer cancel()
	var ms int64
	if err := rec.db.WithContext(ctx).Raw("PRAGMA busy_timeout").Scan(&ms).Error; err != nil || ms < 0 {
		ms = busyUnreadable
	}
	rec.busy.ms.Store(ms)
	return ms
}
