package main

import (
	"os"
	"path/filepath"
	"runtime"
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

	res = runBin(t, "", "call", "bash", `{"command":"true"}`, "--root", dir, "--sandbox-network")
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
