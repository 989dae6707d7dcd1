package dbos

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrExecutorInUse is wrapped by the error of [Engine.Launch] when another
// live process already runs with the same executor ID on the same system
// database: two of them would both resume the same interrupted runs.
var ErrExecutorInUse = errors.New("durable/dbos: the executor ID is in use by another live process")

// executorLock holds the lock that makes this process the only live one
// with its executor ID on its system database: a PostgreSQL session
// advisory lock, or an flock on a file beside the SQLite database.
type executorLock interface {
	release() error
}

// lockKey names the lock of an executor of an application.
func lockKey(app, executorID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(app + "\x00" + executorID))
	return h.Sum64()
}

// lockExecutor takes the executor's lock, or fails with ErrExecutorInUse.
func lockExecutor(ctx context.Context, databaseURL, app, executorID string) (executorLock, error) {
	key := lockKey(app, executorID)
	inUse := fmt.Errorf("%w: executor %q of application %q; give each process running at the same time its own Config.ExecutorID, and take a dead one's runs over with Engine.Recover", ErrExecutorInUse, executorID, app)
	if strings.HasPrefix(strings.ToLower(databaseURL), "sqlite") {
		path, ok := sqlitePath(databaseURL)
		if !ok {
			return nil, nil // in memory: one process only
		}
		return lockFile(fmt.Sprintf("%s.executor-%016x.lock", path, key), inUse)
	}
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return nil, fmt.Errorf("%w: connecting for the executor lock: %w", ErrEngine, err)
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", int64(key)).Scan(&got); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("%w: taking the executor lock: %w", ErrEngine, err)
	}
	if !got {
		conn.Close(ctx)
		return nil, inUse
	}
	return pgLock{conn: conn, key: int64(key)}, nil
}

// pgLock is a session advisory lock. Closing the session releases it too,
// but only once the server has ended the session, after Close returns: a
// new engine launched right after Shutdown could find it still held. So
// release unlocks it first, and returns once the server has.
type pgLock struct {
	conn *pgx.Conn
	key  int64
}

// unlockTimeout bounds the unlock of a release; past it, closing the
// session releases the lock as the server ends it.
const unlockTimeout = 5 * time.Second

func (l pgLock) release() error {
	ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
	defer cancel()
	var released bool
	err := l.conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", l.key).Scan(&released)
	if cerr := l.conn.Close(ctx); err == nil {
		err = cerr
	}
	if err == nil && !released {
		err = errors.New("durable/dbos: the executor lock was not held at release")
	}
	return err
}
