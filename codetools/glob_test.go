package codetools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

func TestGlob(t *testing.T) {
	t.Parallel()
	ct := newSearchTree(t)
	root := ct.Root()
	// Known modification times: newest first, ties by path.
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, rel := range []string{"a.go", "sub/b.go", "sub/deep/more.go", "sub/c.ts", "keep.log", ".hidden/h.txt", "bin.dat", ".gitignore", "sub/.gitignore"} {
		mt := base.Add(time.Duration(i) * time.Hour)
		if rel == "sub/deep/more.go" {
			mt = base.Add(time.Hour) // ties with sub/b.go
		}
		require.NoError(t, os.Chtimes(filepath.Join(root, rel), mt, mt))
	}
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"recursive", map[string]any{"pattern": "**/*.go"}, "sub/b.go\nsub/deep/more.go\na.go"},
		{"top level only", map[string]any{"pattern": "*.go"}, "a.go"},
		{"braces", map[string]any{"pattern": "**/*.{ts,txt}"}, ".hidden/h.txt\nsub/c.ts"},
		{"in path", map[string]any{"pattern": "*.go", "path": "sub"}, "sub/b.go"},
		{"leading folder", map[string]any{"pattern": "sub/**/*.go"}, "sub/b.go\nsub/deep/more.go"},
		{"limit", map[string]any{"pattern": "**/*.go", "limit": 2},
			"sub/b.go\nsub/deep/more.go\n\n[Showing 2 of 3 files (newest first). Use limit=3 for more, or refine pattern]"},
		{"none", map[string]any{"pattern": "**/*.rs"}, "No files found matching pattern"},
		{"missing base", map[string]any{"pattern": "nope/**/*.go"}, "No files found matching pattern"},
		{"ignored", map[string]any{"pattern": "**/*.log"}, "keep.log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := run(t, ct, "glob", tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestGlobErrors(t *testing.T) {
	t.Parallel()
	ct := newSearchTree(t)
	for _, args := range []map[string]any{
		{"pattern": "[a"},
		{"pattern": "*.go", "path": "../.."},
		{"pattern": "*.go", "path": "a.go"},
		{"pattern": "*.go", "path": "missing"},
		{"pattern": "../*.go"},
	} {
		_, err := run(t, ct, "glob", args)
		assert.Error(t, err, "%v", args)
	}
}

func TestGlobDisplayAndCancel(t *testing.T) {
	t.Parallel()
	ct := newSearchTree(t)
	res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{Name: "glob", Arguments: map[string]any{"pattern": "**/*.ts"}})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, FilesPayload{Pattern: "**/*.ts", Total: 1, Shown: 1, Paths: []string{"sub/c.ts"}},
		payloadOf[FilesPayload](t, res, DisplayFiles))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ct.Resolve(ctx, llmtoolkit.Call{Name: "glob", Arguments: map[string]any{"pattern": "**"}})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestWalkManyFolders(t *testing.T) {
	t.Parallel()
	ct := newTools(t)
	files := map[string]string{}
	for i := range 500 {
		files[fmt.Sprintf("a%d/b%d/c%d/f%d.txt", i%5, i%11, i%13, i)] = "x"
	}
	writeTestFiles(t, ct.Root(), files)
	got, err := run(t, ct, "glob", map[string]any{"pattern": "**/*.txt", "limit": 10000})
	require.NoError(t, err)
	assert.Len(t, strings.Split(got, "\n"), 500)
}

// TestGlobAnswerIsCapped: however high the limit, the answer stays within
// the cap grep and glob share, says where it was cut, and the Display
// lists the same paths.
func TestGlobAnswerIsCapped(t *testing.T) {
	t.Parallel()
	ct := newTools(t, WithGrepMaxBytes(4096))
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("%s%03d.txt", strings.Repeat("n", 60), i)] = "x"
	}
	writeTestFiles(t, ct.Root(), files)
	res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{Name: "glob", Arguments: map[string]any{"pattern": "*.txt", "limit": 100000}})
	require.False(t, res.IsError, res.Content)
	assert.LessOrEqual(t, len(res.Content), 4096)
	body, notice, found := strings.Cut(res.Content, "\n\n[")
	require.True(t, found, "the answer says it was cut")
	perPath := 60 + len("000.txt") + 1 // a name and its line break
	assert.Contains(t, notice, fmt.Sprintf("Output truncated at 4.0KB after %d of 300 files", (4096-200)/perPath))
	p := payloadOf[FilesPayload](t, res, DisplayFiles)
	assert.Equal(t, 300, p.Total)
	assert.Equal(t, strings.Split(body, "\n"), p.Paths)
	assert.Equal(t, len(p.Paths), p.Shown)
	assert.Less(t, p.Shown, 300)
}
