package codetools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// p2Tools returns tools over a fresh temporary root.
func p2Tools(t testing.TB, opts ...Option) *CodeTools {
	t.Helper()
	ct, err := New(t.TempDir(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { ct.Close() })
	return ct
}

// p2Call runs one tool through Resolve (schema validation included).
func p2Call(t testing.TB, ct *CodeTools, name string, args map[string]any) (string, error) {
	t.Helper()
	return ct.Resolve(context.Background(), llmtoolkit.Call{Name: name, Arguments: args})
}

// p2Write writes files (slash paths relative to root), creating folders.
func p2Write(t testing.TB, root string, files map[string]string) {
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
