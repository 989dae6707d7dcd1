package walk_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

// TestDirOpenReadsWhatTheFileHolds: a file opened by Dir.Open reports its
// end without a last read once it was read up to the size seen at open,
// yet reads what the file holds when it is read: a file that grew or
// shrank after the open, read whole or in pieces, through buffers larger
// than it, exactly its size and smaller.
func TestDirOpenReadsWhatTheFileHolds(t *testing.T) {
	const body = "package main\n\nfunc main() {}\n"
	for _, tc := range []struct {
		name   string
		change func(path string) // after the open, before the first read
		want   string
	}{
		{"unchanged", func(string) {}, body},
		{"grew", func(p string) { appendTo(t, p, "// more\n") }, body + "// more\n"},
		{"shrank", func(p string) { require.NoError(t, os.Truncate(p, 8)) }, body[:8]},
		{"emptied", func(p string) { require.NoError(t, os.Truncate(p, 0)) }, ""},
		{"empty, then written", func(p string) { appendTo(t, p, body) }, body},
	} {
		for _, bufSize := range []int{1 << 20, len(tc.want), 7} {
			if bufSize == 0 {
				continue
			}
			t.Run(tc.name, func(t *testing.T) {
				r, dir := newRoot(t)
				initial := body
				if tc.name == "empty, then written" {
					initial = ""
				}
				write(t, dir, map[string]string{"f.go": initial})
				d, err := walk.OpenStart(r, ".", ".")
				require.NoError(t, err)
				defer d.Close()
				f, err := d.Open("f.go")
				require.NoError(t, err)
				defer f.Close()
				tc.change(filepath.Join(dir, "f.go"))
				var got strings.Builder
				buf := make([]byte, bufSize)
				for {
					n, err := f.Read(buf)
					got.Write(buf[:n])
					if err == io.EOF {
						break
					}
					require.NoError(t, err)
				}
				assert.Equal(t, tc.want, got.String(), "buffer of %d bytes", bufSize)
				n, err := f.Read(buf)
				assert.Equal(t, 0, n)
				assert.Equal(t, io.EOF, err, "a read past the end")
			})
		}
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}
