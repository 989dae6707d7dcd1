package codetools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func linesText(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, "small.txt", "alpha\nbeta\ngamma\n")
	writeTestFile(t, dir, "noeol.txt", "alpha\nbeta")
	writeTestFile(t, dir, "crlf.txt", "a\r\nb\r\n")
	writeTestFile(t, dir, "big.txt", linesText(5000))
	writeTestFile(t, dir, "120.txt", linesText(120))
	writeTestFile(t, dir, "empty.txt", "")
	wide := strings.Repeat(strings.Repeat("x", 99)+"\n", 1000) // 100 KB in 1,000 lines
	writeTestFile(t, dir, "wide.txt", wide)

	tests := []struct {
		name string
		args map[string]any
		want string
		err  string
	}{
		{"whole file, no prefixes", map[string]any{"path": "small.txt"}, "alpha\nbeta\ngamma", ""},
		{"no final newline", map[string]any{"path": "noeol.txt"}, "alpha\nbeta", ""},
		{"CRLF as it is", map[string]any{"path": "crlf.txt"}, "a\r\nb\r", ""},
		{"offset", map[string]any{"path": "small.txt", "offset": 2}, "beta\ngamma", ""},
		{"offset and limit", map[string]any{"path": "small.txt", "offset": 2, "limit": 1}, "beta\n\n[1 more lines in file. Use offset=3 to continue.]", ""},
		{"limit reaching the end has no notice", map[string]any{"path": "small.txt", "offset": 2, "limit": 2}, "beta\ngamma", ""},
		{"line cap", map[string]any{"path": "big.txt"}, strings.TrimSuffix(linesText(2000), "\n") + "\n\n[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]", ""},
		{"line cap from an offset", map[string]any{"path": "big.txt", "offset": 4001}, strings.TrimSuffix(strings.TrimPrefix(linesText(5000), linesText(4000)), "\n"), ""},
		{"limit above the cap", map[string]any{"path": "big.txt", "offset": 2001, "limit": 2500}, strings.TrimSuffix(strings.TrimPrefix(linesText(4000), linesText(2000)), "\n") + "\n\n[Showing lines 2001-4000 of 5000. Use offset=4001 to continue.]", ""},
		{"byte cap", map[string]any{"path": "wide.txt"}, strings.TrimSuffix(strings.Repeat(strings.Repeat("x", 99)+"\n", 512), "\n") + "\n\n[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]", ""},
		{"offset beyond the end", map[string]any{"path": "120.txt", "offset": 200}, "", "offset 200 is beyond end of file (120 lines total)"},
		{"offset just past the end", map[string]any{"path": "120.txt", "offset": 121}, "", "offset 121 is beyond end of file (120 lines total)"},
		{"last line", map[string]any{"path": "120.txt", "offset": 120}, "line 120", ""},
		{"empty file", map[string]any{"path": "empty.txt"}, "(empty file)", ""},
		{"folder", map[string]any{"path": "."}, "", ". is a directory, not a file: use list_directory or tree to see what it holds"},
		{"missing", map[string]any{"path": "nope.txt"}, "", "file not found: nope.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := run(t, c, "read_file", tt.args)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestReadFileLongLine(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	long := strings.Repeat("é", 60<<10) // 120 KiB on one line
	writeTestFile(t, dir, "long.txt", "short\n"+long+"\nafter\n")
	got, err := run(t, c, "read_file", map[string]any{"path": "long.txt", "offset": 2})
	require.NoError(t, err)
	content, notice, ok := strings.Cut(got, "\n\n")
	require.True(t, ok)
	assert.Len(t, content, 50<<10, "cut at the byte cap, on a character boundary")
	assert.True(t, strings.HasPrefix(long, content))
	assert.Equal(t, "[Line 2 is 120.0KB, longer than the 50.0KB limit: only its first 50.0KB are shown. "+
		"To read more of it use bash: sed -n '2p' long.txt | tail -c +51201 | head -c 51200. Use offset=3 to continue.]", notice)

	// From line 1, the long line stops the read without being cut.
	got, err = run(t, c, "read_file", map[string]any{"path": "long.txt"})
	require.NoError(t, err)
	assert.Equal(t, "short\n\n[Showing lines 1-1 of 3 (50.0KB limit). Use offset=2 to continue.]", got)
}

func TestReadFileBinary(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	zip := append([]byte("PK\x03\x04"), make([]byte, 2000)...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.zip"), zip, 0o644))
	_, err := run(t, c, "read_file", map[string]any{"path": "a.zip"})
	require.EqualError(t, err, "a.zip is a binary file (application/zip, 2.0KB); read_file shows text only: use file_info for its details")
}

func TestReadFileDisplay(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, "f.txt", linesText(10))
	res := execute(c, "read_file", map[string]any{"path": "./f.txt", "offset": 3, "limit": 2})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, FilePayload{
		Path: "f.txt", Content: "line 3\nline 4", StartLine: 3, EndLine: 4, TotalLines: 10, Truncated: true,
	}, payloadOf[FilePayload](t, res, DisplayFile))
}

func TestReadFileCustomLimits(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t, WithReadLimits(3, 1<<20))
	writeTestFile(t, dir, "f.txt", linesText(10))
	got := mustRun(t, c, "read_file", map[string]any{"path": "f.txt"})
	assert.Equal(t, "line 1\nline 2\nline 3\n\n[Showing lines 1-3 of 10. Use offset=4 to continue.]", got)
	assert.Contains(t, c.tools[0].Description, "at most 3 lines or 1.0MB")
}

func TestReadFileNamedPipeRefused(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	if err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
		t.Skip("no named pipes here:", err)
	}
	_, err := run(t, c, "read_file", map[string]any{"path": "pipe"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pipe is not a regular file")
}
