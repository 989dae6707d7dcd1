package walk_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

// TestReadIgnoreCap: small files whole; past the cap, the whole lines of
// the first MiB and an error saying so.
func TestReadIgnoreCap(t *testing.T) {
	r, dir := newRoot(t)
	line := "0123456789abcde\n" // 16 bytes
	const max = walk.MaxIgnoreFileBytes
	d, err := walk.OpenStart(r, ".", ".")
	require.NoError(t, err)
	defer d.Close()
	for _, tc := range []struct {
		name    string
		content string
		want    string
		cut     bool
	}{
		{"empty", "", "", false},
		{"small", "*.o\n!keep.o", "*.o\n!keep.o", false},
		{"exactly the cap", strings.Repeat(line, max/16), strings.Repeat(line, max/16), false},
		{"a line past the cap", strings.Repeat(line, max/16+1), strings.Repeat(line, max/16), true},
		{"a line across the cap", "x\n" + strings.Repeat("y", max), "x\n", true},
		{"one long line", strings.Repeat("y", 2*max), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "ignore"), []byte(tc.content), 0o644))
			data, err := d.ReadIgnore("ignore", "x/.gitignore")
			assert.Equal(t, tc.want, string(data))
			if tc.cut {
				require.ErrorIs(t, err, walk.ErrIgnoreCut)
				assert.Contains(t, err.Error(), "x/.gitignore")
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// TestReadIgnoreRefusesLinksAndFolders: the walker's reader never follows
// a link and reads regular files only.
func TestReadIgnoreRefusesLinksAndFolders(t *testing.T) {
	r, dir := newRoot(t)
	write(t, dir, map[string]string{"file": "*.o\n"})
	require.NoError(t, os.Mkdir(filepath.Join(dir, "folder"), 0o755))
	d, err := walk.OpenStart(r, ".", ".")
	require.NoError(t, err)
	defer d.Close()
	_, err = d.ReadIgnore("folder", "sub/folder")
	assert.ErrorIs(t, err, walk.ErrIgnoreNotRegular)
	assert.ErrorContains(t, err, "sub/folder")
	if os.Symlink("file", filepath.Join(dir, "link")) == nil {
		_, err = d.ReadIgnore("link", "link")
		assert.ErrorIs(t, err, walk.ErrIgnoreLink)
	}
	data, err := d.ReadIgnore("file", "file")
	require.NoError(t, err)
	assert.Equal(t, "*.o\n", string(data))
}

// TestRules: the rules in force in a folder are those of the root and of
// every folder down to it; a .gitignore that is a link is skipped, logged,
// and the rules below it still apply.
func TestRules(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	r, dir := newRoot(t)
	write(t, dir, map[string]string{
		".gitignore":       "*.log\n",
		"a/rules":          "*.txt\n",
		"a/b/.gitignore":   "*.tmp\n!keep.log\n",
		"a/b/c/.gitignore": "*.go\n",
	})
	linked := os.Symlink("rules", filepath.Join(dir, "a", ".gitignore")) == nil

	top, err := walk.RulesAt(context.Background(), r, ".")
	require.NoError(t, err)
	assert.False(t, top.Empty())
	assert.True(t, top.Ignored("x.log", false))

	st, err := walk.RulesAt(context.Background(), r, filepath.FromSlash("a/b"))
	require.NoError(t, err)
	assert.True(t, st.Ignored("a/b/x.log", false), "the root's rule")
	assert.True(t, st.Ignored("a/b/x.tmp", false), "b's own rule")
	assert.False(t, st.Ignored("a/b/keep.log", false), "b's negation")
	assert.False(t, st.Ignored("a/b/x.txt", false), "a's .gitignore is a link: not read")
	if linked {
		assert.Contains(t, logs.String(), "symbolic link")
	}

	c := st.Child(r, filepath.FromSlash("a/b/c"))
	assert.True(t, c.Ignored("a/b/c/x.go", false))
	assert.False(t, st.Ignored("a/b/c/x.go", false), "the parent's rules are unchanged")
	assert.Same(t, c, c.Child(r, filepath.FromSlash("a/b/c/none")), "no .gitignore: the same rules")

	empty, _ := newRoot(t)
	none, err := walk.RulesAt(context.Background(), empty, ".")
	require.NoError(t, err)
	assert.True(t, none.Empty())
}

func TestIgnoreAboveIsCancellable(t *testing.T) {
	r, dir := newRoot(t)
	deep := strings.Repeat("a/", 100) + "b"
	require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.FromSlash(deep)), 0o755))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := walk.IgnoreAbove(ctx, r, deep)
	require.ErrorIs(t, err, context.Canceled)
}
