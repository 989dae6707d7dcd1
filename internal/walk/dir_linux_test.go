package walk_test

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
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

// TestDirEntriesAreReadDirs: a folder's listing from getdents gives what
// os.ReadDir gives, in the same order: names (across several getdents
// calls), types (folders, links, pipes) and what Info says.
func TestDirEntriesAreReadDirs(t *testing.T) {
	r, dir := newRoot(t)
	files := map[string]string{}
	for i := range 1500 { // more than one 16 KiB getdents buffer
		files[strings.Repeat("long-name-", 3)+strconv.Itoa(i)+".go"] = "x"
	}
	files["sub/inner.txt"] = "y"
	write(t, dir, files)
	require.NoError(t, os.Symlink("sub", filepath.Join(dir, "link")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(dir, "sub"), 0o1755))

	d, err := walk.OpenStart(r, ".", ".")
	require.NoError(t, err)
	defer d.Close()
	sub, err := d.OpenSub("sub")
	require.NoError(t, err)
	defer sub.Close()
	for _, tc := range []struct {
		d    *walk.Dir
		path string
	}{{d, dir}, {sub, filepath.Join(dir, "sub")}} {
		got, err := tc.d.Entries()
		require.NoError(t, err)
		want, err := os.ReadDir(tc.path)
		require.NoError(t, err)
		slices.SortFunc(got, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		require.Len(t, got, len(want))
		for i, w := range want {
			g := got[i]
			assert.Equal(t, w.Name(), g.Name())
			assert.Equal(t, w.Type(), g.Type(), w.Name())
			assert.Equal(t, w.IsDir(), g.IsDir(), w.Name())
			wi, err := w.Info()
			require.NoError(t, err)
			gi, err := g.Info()
			require.NoError(t, err)
			assert.Equal(t, wi.Mode(), gi.Mode(), w.Name())
			assert.Equal(t, wi.Size(), gi.Size(), w.Name())
			assert.Equal(t, wi.ModTime(), gi.ModTime(), w.Name())
			assert.Equal(t, wi.Name(), gi.Name())
		}
	}
	sub.Close()
	sub.Close() // a second Close does nothing (the descriptor may be another's by now)
}
