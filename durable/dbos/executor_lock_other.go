//go:build !unix

package dbos

// lockFile does not lock where flock is missing: there, do not launch two
// processes with the same executor ID on one SQLite database.
func lockFile(string, error) (executorLock, error) { return nil, nil }
