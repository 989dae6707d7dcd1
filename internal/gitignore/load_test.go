package gitignore

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeFiles is a readFile over a map: a name maps to its content, or to an
// error when the content is nil and the name is in errs.
type fakeFiles struct {
	content map[string]string
	errs    map[string]error
}

func (f fakeFiles) read(name string) ([]byte, error) {
	if err, ok := f.errs[name]; ok {
		if c, ok := f.content[name]; ok {
			return []byte(c), err // read in part
		}
		return nil, err
	}
	if c, ok := f.content[name]; ok {
		return []byte(c), nil
	}
	return nil, fs.ErrNotExist
}

var errUnreadable = errors.New("unreadable")

// TestLoadPathGoesOnPastUnreadable: a .gitignore that cannot be read is
// skipped, and the ones below it still apply, as in git.
func TestLoadPathGoesOnPastUnreadable(t *testing.T) {
	files := fakeFiles{
		content: map[string]string{
			"a/.gitignore":     "*.tmp\n",
			"a/b/c/.gitignore": "!keep.tmp\n*.o\n",
		},
		errs: map[string]error{
			".gitignore":     errUnreadable,
			"a/b/.gitignore": errUnreadable,
		},
	}
	for _, tc := range []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"a/b/c/x.tmp", false, true},
		{"a/b/c/keep.tmp", false, false},
		{"a/b/c/y.o", false, true},
		{"a/b/c/y.go", false, false},
	} {
		m, err := LoadPath(files.read, "a/b/c")
		assert.Equal(t, tc.want, m.Ignored(tc.path, tc.isDir), tc.path)
		assert.ErrorIs(t, err, errUnreadable)
	}
	_, err := LoadPath(files.read, "a/b/c")
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "the failures joined: %v", err)
	assert.Len(t, joined.Unwrap(), 2, "both failures reported: %v", err)

	// Without failures, no error.
	m, err := LoadPath(fakeFiles{content: files.content}.read, "a/b/c")
	require.NoError(t, err)
	assert.True(t, m.Ignored("a/b/c/y.o", false))
}

// TestLoadDirPartialData: data returned with an error (a file read in
// part) is used, and the error reported.
func TestLoadDirPartialData(t *testing.T) {
	errCut := errors.New("read in part")
	files := fakeFiles{
		content: map[string]string{"d/.gitignore": "*.o\n"},
		errs:    map[string]error{"d/.gitignore": errCut},
	}
	m, err := LoadDir(files.read, "d", nil)
	assert.ErrorIs(t, err, errCut)
	assert.True(t, m.Ignored("d/a.o", false))
	assert.False(t, m.Ignored("a.o", false))

	m, err = LoadPath(files.read, "d")
	assert.ErrorIs(t, err, errCut)
	assert.True(t, m.Ignored("d/a.o", false))
}
