package codetools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/web"
	"github.com/stretchr/testify/require"
)

// newTestTools returns tools over a fresh temporary folder.
func newTestTools(t testing.TB, opts ...Option) (string, *CodeTools) {
	t.Helper()
	dir := t.TempDir()
	c, err := New(dir, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c.Root(), c
}

// run calls one tool through Resolve.
func run(t testing.TB, c *CodeTools, name string, args map[string]any) (string, error) {
	t.Helper()
	return c.Resolve(context.Background(), llmtoolkit.Call{Name: name, Arguments: args})
}

// mustRun calls one tool and requires success.
func mustRun(t testing.TB, c *CodeTools, name string, args map[string]any) string {
	t.Helper()
	out, err := run(t, c, name, args)
	require.NoError(t, err)
	return out
}

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

// execute calls one tool through llmtoolkit.Execute, to see its Display.
func execute(c *CodeTools, name string, args map[string]any) llmtoolkit.Result {
	return llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: name, Arguments: args})
}

func writeTestFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func readTestFile(t testing.TB, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	require.NoError(t, err)
	return string(data)
}

// symlink makes name (inside dir) a symbolic link to target.
func symlink(target, dir, name string) error {
	return os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name)))
}

// stressEnv names the environment variable that turns on the heaviest
// stress tests (30,000-deep trees, process bombs in every sandbox, 10 MiB
// hostile pages). CI sets it (.ci/run); a plain go test ./... leaves them
// out, or runs a smaller case that still shows the property.
const stressEnv = "LLMTOOLKIT_STRESS"

// stress reports whether the heaviest stress tests run.
func stress() bool { return os.Getenv(stressEnv) != "" }

// requireStress skips t unless the stress tests run.
func requireStress(t testing.TB) {
	t.Helper()
	if !stress() {
		t.Skipf("a heavy stress test: set %s=1 to run it (CI does)", stressEnv)
	}
}

// withResolver gives the allow-list's Dialer (http_get and the sandbox's
// proxy) a resolver of the test's, so that made-up names reach its servers.
func withResolver(r web.Resolver) Option { return func(c *config) { c.http.resolver = r } }
