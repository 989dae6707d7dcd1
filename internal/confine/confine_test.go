package confine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

var errOutside = errors.New("outside the working directory")

// newRoot returns a confine.Root over a fresh folder, with the folder's
// path and a sibling folder outside it.
func newRoot(t testing.TB) (r *confine.Root, dir, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	dir, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	fsroot, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { fsroot.Close() })
	return &confine.Root{FS: fsroot, Dir: dir, Outside: errOutside}, dir, outside
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func symlinkOrSkip(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
}

func TestRel(t *testing.T) {
	r, dir, _ := newRoot(t)
	r.ReadName = func(p string) string { return strings.TrimPrefix(p, "quoted:") }
	tests := []struct {
		name, p    string
		allowEmpty bool
		want       string
		outside    bool   // the error wraps Outside
		errText    string // else, a part of the error
	}{
		{name: "relative", p: "a/b.txt", want: filepath.FromSlash("a/b.txt")},
		{name: "cleaned", p: "a//./c/../b/", want: filepath.FromSlash("a/b")},
		{name: "dot", p: ".", want: "."},
		{name: "empty allowed", p: "", allowEmpty: true, want: "."},
		{name: "empty refused", p: "", errText: "path is empty"},
		{name: "absolute inside", p: filepath.Join(dir, "a", "b"), want: filepath.FromSlash("a/b")},
		{name: "the root itself", p: dir, want: "."},
		{name: "absolute outside", p: filepath.Dir(dir), outside: true},
		{name: "climbs out", p: "../x", outside: true},
		{name: "climbs out after a folder", p: "a/../../x", outside: true},
		{name: "NUL byte", p: "a\x00b", errText: "NUL byte"},
		{name: "ReadName first", p: "quoted:a/b", want: filepath.FromSlash("a/b")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Rel("path", tc.p, tc.allowEmpty)
			switch {
			case tc.outside:
				require.ErrorIs(t, err, errOutside)
			case tc.errText != "":
				require.ErrorContains(t, err, tc.errText)
			default:
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	r, dir, outside := newRoot(t)
	write(t, dir, "a/b/file", "x")
	write(t, outside, "secret", "x")
	for link, target := range map[string]string{
		"docs":     "a/b",                        // a folder link
		"chain":    "a/b/hop",                    // chain -> a/b/hop -> file
		"a/b/hop":  "file",                       //
		"abs":      filepath.Join(dir, "a"),      // absolute, inside
		"up":       "..",                         // relative, out
		"out":      outside,                      // absolute, out
		"loop1":    "loop2",                      //
		"loop2":    "loop1",                      //
		"a/parent": "../a/b/../b/./file",         // dots in the target
		"a/abs":    filepath.Join(dir, "a", "b"), // absolute, back inside
	} {
		symlinkOrSkip(t, target, filepath.Join(dir, filepath.FromSlash(link)))
	}
	tests := []struct {
		p, want string
		outside bool
		errText string
	}{
		{p: "a/b/file", want: "a/b/file"},
		{p: "docs/file", want: "a/b/file"},
		{p: "chain", want: "a/b/file"},
		{p: "abs/b/file", want: "a/b/file"},
		{p: "a/parent", want: "a/b/file"},
		{p: "a/abs/file", want: "a/b/file"},
		{p: "docs/../b", want: "b"}, // Rel cleans before links are followed
		{p: "new/dir/file", want: "new/dir/file"},
		{p: "docs/new/file", want: "a/b/new/file"},
		{p: "a/b/file/below", want: "a/b/file/below"},
		{p: "up/x", outside: true},
		{p: "out/secret", outside: true},
		{p: "loop1", errText: "too many levels of symbolic links"},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.p, func(t *testing.T) {
			got, err := r.Canonical(ctx, "path", tc.p, false)
			switch {
			case tc.outside:
				require.ErrorIs(t, err, errOutside)
			case tc.errText != "":
				require.ErrorContains(t, err, tc.errText)
			default:
				require.NoError(t, err)
				assert.Equal(t, tc.want, filepath.ToSlash(got))
			}
		})
	}
}

// TestResolveDeepIsCancellable: a long path stops at the context's end.
func TestResolveDeepIsCancellable(t *testing.T) {
	r, _, _ := newRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Resolve(ctx, "path", "p", strings.Repeat("a/", 200)+"f")
	require.ErrorIs(t, err, context.Canceled)
}

func TestOpenChecksTheKind(t *testing.T) {
	r, dir, outside := newRoot(t)
	write(t, dir, "dir/file.txt", "hello")
	write(t, outside, "secret", "x")
	symlinkOrSkip(t, outside, filepath.Join(dir, "out"))
	tests := []struct {
		rel     string
		want    confine.Want
		errText string
		outside bool
	}{
		{rel: "dir/file.txt", want: confine.File},
		{rel: "dir/file.txt", want: confine.Either},
		{rel: "dir", want: confine.Dir},
		{rel: "dir", want: confine.Either},
		{rel: "dir", want: confine.File, errText: "is a directory, not a file"},
		{rel: "dir/file.txt", want: confine.Dir, errText: "not a directory"},
		{rel: "missing", want: confine.File, errText: "file not found: missing"},
		{rel: "out/secret", want: confine.File, outside: true},
	}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			f, info, err := r.Open(tc.rel, filepath.FromSlash(tc.rel), tc.want)
			switch {
			case tc.outside:
				require.ErrorIs(t, err, errOutside)
			case tc.errText != "":
				require.ErrorContains(t, err, tc.errText)
			default:
				require.NoError(t, err)
				require.NotNil(t, info)
				require.NoError(t, f.Close())
			}
		})
	}
}

func TestFileError(t *testing.T) {
	r, _, _ := newRoot(t)
	_, err := r.FS.Open("missing")
	assert.EqualError(t, r.FileError("missing", err), "file not found: missing")
	_, err = r.FS.Open("../x")
	assert.True(t, confine.IsEscape(err))
	assert.ErrorIs(t, r.FileError("../x", err), errOutside)
	assert.False(t, confine.IsEscape(errors.New("path escapes from parent")), "only an os.Root refusal")
	other := errors.New("disk on fire")
	assert.ErrorIs(t, r.FileError("p", other), other)
}

// FuzzRelStaysInside: whatever the argument, Rel refuses it or returns a
// local path (no "..", not absolute).
func FuzzRelStaysInside(f *testing.F) {
	for _, s := range []string{"", ".", "..", "a/../..", "/", "//x", "a/./b/", `..\x`, "a\x00"} {
		f.Add(s)
	}
	r, dir, _ := newRoot(f)
	f.Fuzz(func(t *testing.T, p string) {
		for _, in := range []string{p, filepath.Join(dir, p)} {
			got, err := r.Rel("path", in, true)
			if err != nil {
				continue
			}
			if got != "." && !filepath.IsLocal(got) {
				t.Fatalf("Rel(%q) = %q, which leaves the root", in, got)
			}
		}
	})
}
