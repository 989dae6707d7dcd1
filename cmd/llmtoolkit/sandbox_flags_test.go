package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --sandbox: a bad mode is a usage error; read-only stops a write that
// workspace-write lets through; bash never sees this process's secrets.
func TestCallSandboxFlag(t *testing.T) {
	dir := projectDir(t)
	res := runBin(t, "", "call", "bash", `{"command":"true"}`, "--root", dir, "--sandbox", "bogus")
	assert.Equal(t, 2, res.code, res.stderr)
	assert.Contains(t, res.stderr, "workspace-write")

	res = runBin(t, "", "call", "bash", `{"command":"true"}`, "--root", dir, "--sandbox", "off", "--sandbox-network")
	assert.Equal(t, 2, res.code, res.stderr)

	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer host-token")
	res = runBin(t, "", "call", "bash", `{"command":"echo ${OTEL_EXPORTER_OTLP_HEADERS:-clean}"}`, "--root", dir)
	assert.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "clean")

	if runtime.GOOS != "linux" {
		return
	}
	res = runBin(t, "", "call", "bash", `{"command":"echo x > ro.txt"}`, "--root", dir, "--sandbox", "read-only")
	if res.code == 1 && res.stderr != "" {
		t.Skipf("no sandbox here: %s", res.stderr)
	}
	assert.Equal(t, 1, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.NoFileExists(t, filepath.Join(dir, "ro.txt"))

	res = runBin(t, "", "call", "bash", `{"command":"echo x > rw.txt"}`, "--root", dir, "--sandbox", "workspace-write")
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	_, err := os.Stat(filepath.Join(dir, "rw.txt"))
	assert.NoError(t, err)
}

// Issue 35, row 10: without --sandbox, bash runs sandboxed where a backend
// works (a write outside the root is refused) and mcp says how on stderr;
// --sandbox off opts out; an explicit mode that cannot run fails closed.
func TestSandboxByDefault(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox backends run on Linux")
	}
	dir, outside := projectDir(t), t.TempDir()
	touch := `{"command":"touch ` + filepath.Join(outside, "x") + `"}`

	res := runBin(t, "", "mcp", "--root", dir)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stderr, "bash runs ")
	if strings.Contains(res.stderr, "bash runs unsandboxed") {
		t.Skipf("no sandbox backend works here: %s", res.stderr)
	}
	assert.Contains(t, res.stderr, "workspace-write, no network")

	res = runBin(t, "", "call", "bash", touch, "--root", dir)
	assert.Equal(t, 1, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.NoFileExists(t, filepath.Join(outside, "x"), "written outside the root by default")

	res = runBin(t, "", "call", "bash", touch, "--root", dir, "--sandbox", "off")
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.FileExists(t, filepath.Join(outside, "x"), "--sandbox off opts out")

	t.Setenv("PATH", t.TempDir()) // no bwrap to be found
	res = runBin(t, "", "mcp", "--root", dir, "--sandbox", "workspace-write", "--sandbox-backend", "bubblewrap")
	assert.Equal(t, 1, res.code, res.stderr)
	assert.Contains(t, res.stderr, "bubblewrap")
	assert.NotContains(t, res.stderr, "bash runs unsandboxed", "fails closed, never unsandboxed")
}
