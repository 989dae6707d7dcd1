package codetools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// newTools returns tools over a fresh temporary root (newTestTools without
// the root).
func newTools(t testing.TB, opts ...Option) *CodeTools {
	t.Helper()
	ct, err := New(t.TempDir(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { ct.Close() })
	return ct
}

// writeTestFiles writes files (slash paths relative to root), creating folders.
func writeTestFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// withoutContainment runs bash's commands without a PID namespace, so that
// the tests of the process guard's scan (the fallback) run where
// containment is available.
func withoutContainment() Option { return func(c *config) { c.bash.noContain = true } }
