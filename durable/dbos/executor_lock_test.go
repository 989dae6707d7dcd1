package dbos

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExecutorInUse: a second live engine with the same executor ID on the
// same database is refused at Launch (it would resume the first one's
// runs while they run); another ID is not; the ID is free again once the
// first engine shut down.
func TestExecutorInUse(t *testing.T) {
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			url := db(t)
			engine := func(id string) *Engine {
				e, err := New(context.Background(), Config{DatabaseURL: url, ExecutorID: id, ApplicationVersion: "test", Agent: benchAgent, Logger: quietLogger()})
				require.NoError(t, err)
				return e
			}
			first := engine("a")
			require.NoError(t, first.Launch())
			second := engine("a")
			err := second.Launch()
			require.ErrorIs(t, err, ErrExecutorInUse)
			assert.Contains(t, err.Error(), `executor "a"`)
			require.NoError(t, second.Shutdown(5*time.Second))
			other := engine("b")
			require.NoError(t, other.Launch())
			require.NoError(t, other.Shutdown(5*time.Second))
			require.NoError(t, first.Shutdown(5*time.Second))
			third := engine("a")
			require.NoError(t, third.Launch())
			require.NoError(t, third.Shutdown(5*time.Second))
		})
	}
}

// TestExecutorLockFreeAtRelease: the executor's lock is free as soon as
// release returns, so an engine launched right after another's Shutdown
// takes it. (Before, release only closed the PostgreSQL session, which
// frees the lock once the server has ended it: a lock taken at once found
// it held now and then.)
func TestExecutorLockFreeAtRelease(t *testing.T) {
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			url := db(t)
			for i := range 200 {
				lock, err := lockExecutor(t.Context(), url, "llmtoolkit", "a")
				require.NoError(t, err, "round %d", i)
				if lock == nil {
					t.Skip("an in-memory database takes no lock")
				}
				require.NoError(t, lock.release(), "round %d", i)
			}
		})
	}
}
