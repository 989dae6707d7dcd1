package codetools

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileInfo(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	p := writeTestFile(t, dir, "src/a.go", "package a\n\nfunc A() {}\n")
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	require.NoError(t, os.Chtimes(p, mtime, mtime))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "img.png"), append([]byte("\x89PNG\r\n\x1a\n\x00\x00"), make([]byte, 100)...), 0o600))
	require.NoError(t, symlink("src/a.go", dir, "link.go"))
	require.NoError(t, symlink("missing", dir, "dangling"))

	got := mustRun(t, c, "file_info", map[string]any{"path": "src/a.go"})
	want := []string{
		"path: src/a.go",
		"type: file",
		"size: 23 bytes (23B)",
		"mode: -rw-r--r-- (0644)",
		"modified: " + mtime.Local().Format(time.RFC3339),
		"links: 1", // where the system counts them
		"mime: text/plain; charset=utf-8",
		"binary: false",
		"lines: 3",
	}
	if runtime.GOOS == "windows" {
		want = slices.Delete(want, 5, 6)
	}
	assert.Equal(t, strings.Join(want, "\n"), got)

	got = mustRun(t, c, "file_info", map[string]any{"path": "img.png"})
	assert.Contains(t, got, "mime: image/png\nbinary: true")
	assert.Contains(t, got, "mode: -rw------- (0600)")
	assert.NotContains(t, got, "lines:")

	got = mustRun(t, c, "file_info", map[string]any{"path": "src"})
	assert.Contains(t, got, "type: directory")
	assert.NotContains(t, got, "mime:")

	got = mustRun(t, c, "file_info", map[string]any{"path": "link.go"})
	assert.Contains(t, got, "type: symlink -> src/a.go\ntarget type: file\nsize: 23 bytes")
	assert.Contains(t, got, "lines: 3")

	got = mustRun(t, c, "file_info", map[string]any{"path": "dangling"})
	assert.Contains(t, got, "type: symlink -> missing\ntarget: cannot be followed (its target does not exist)")

	_, err := run(t, c, "file_info", map[string]any{"path": "nope"})
	assert.EqualError(t, err, "file not found: nope")
}

func TestSniffMIME(t *testing.T) {
	t.Parallel()
	mime, bin := sniffMIME([]byte("hello\n"))
	assert.Equal(t, "text/plain; charset=utf-8", mime)
	assert.False(t, bin)
	mime, bin = sniffMIME([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	assert.Equal(t, "image/png", mime)
	assert.True(t, bin)
}
