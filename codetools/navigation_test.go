package codetools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

func TestNavigationToolsOnlyWithLanguageServers(t *testing.T) {
	plain := newTools(t)
	for _, name := range []string{"diagnostics", "definition", "references", "hover", "symbols", "rename"} {
		_, ok := plain.LookupTool(name)
		assert.False(t, ok, name)
	}
	c := newTools(t, WithLanguageServers(fakeServer(t, "ok")))
	for _, name := range []string{"diagnostics", "definition", "references", "hover", "symbols"} {
		tool, ok := c.LookupTool(name)
		require.True(t, ok, name)
		assert.True(t, tool.Annotations.ReadOnly, "%s is read-only (plan mode runs it)", name)
		require.NotNil(t, tool.Paths, name)
	}
	rename, ok := c.LookupTool("rename")
	require.True(t, ok)
	assert.False(t, rename.Annotations.ReadOnly, "plan mode refuses rename")
	assert.True(t, rename.Annotations.Destructive)
	require.NotNil(t, rename.Paths)
}

// TestRenameIsAllOrNothing: a rename whose edits reach outside the root,
// or a file the host excludes, changes nothing; one inside applies to
// every file.
func TestRenameIsAllOrNothing(t *testing.T) {
	c := newTools(t, WithLanguageServers(fakeServer(t, "ok")))
	writeTestFiles(t, c.Root(), map[string]string{"a.fake": "old a\n", "secret/b.fake": "old b\n", "b.fake": "old b\n"})
	rename := func(ctx context.Context, path, newName string) llmtoolkit.Result {
		return llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "rename", Arguments: map[string]any{"path": path, "line": 1, "symbol": "old", "newName": newName}})
	}
	res := rename(context.Background(), "a.fake", "outside")
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "outside the working directory; nothing was changed")
	assert.Equal(t, "old a\n", readTestFile(t, c.Root(), "a.fake"))

	ctx := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.ExcludedPaths = append(sc.ExcludedPaths, "secret/**") })
	res = rename(ctx, "secret/b.fake", "new")
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "excludes")
	res = rename(ctx, "a.fake", "sibling")
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "Renamed to sibling: 2 edits in 2 files.")
	assert.Equal(t, "sibling a\n", readTestFile(t, c.Root(), "a.fake"))
	assert.Equal(t, "sibling b\n", readTestFile(t, c.Root(), "b.fake"))

	// A file that no longer matches the server's view: nothing written.
	require.NoError(t, os.WriteFile(filepath.Join(c.Root(), "b.fake"), []byte("x\n"), 0o644))
	res = llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: "rename", Arguments: map[string]any{"path": "a.fake", "line": 1, "column": 1, "newName": "sibling"}})
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "do not apply")
	assert.Contains(t, res.Content, "nothing was changed")
	assert.Equal(t, "sibling a\n", readTestFile(t, c.Root(), "a.fake"))
}

// TestNavigationWithGopls: definition (into the module and out of it),
// references, hover, symbols, diagnostics and rename through the tools.
func TestNavigationWithGopls(t *testing.T) {
	if testing.Short() {
		t.Skip("a real gopls: not in -short")
	}
	t.Parallel() // a real server: see "Real servers" in language_servers_test.go
	server := goplsServer(t)
	dir := goModule(t)
	writeTestFiles(t, dir, map[string]string{"c/c.go": "package c\n\nimport (\n\t\"strconv\"\n\n\t\"example.com/m/a\"\n)\n\nfunc S() string { return strconv.Itoa(a.N()) }\n"})
	c, err := New(dir, WithLanguageServers(server), WithLanguageServerLimits(LanguageServerLimits{Settle: 60 * time.Second}))
	require.NoError(t, err)
	defer c.Close()
	call := func(name string, args map[string]any) llmtoolkit.Result {
		res := llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: name, Arguments: args})
		require.False(t, res.IsError, "%s: %s", name, res.Content)
		return res
	}
	res := call("definition", map[string]any{"path": "b/b.go", "line": 5, "symbol": "N"})
	assert.Contains(t, res.Content, "\na/a.go:4:6: func N() int { return 1 }")
	res = call("definition", map[string]any{"path": "c/c.go", "line": 9, "symbol": "Itoa"})
	assert.Contains(t, res.Content, "/src/strconv/")
	assert.Contains(t, res.Content, "(outside the working directory: a read-only reference)")
	res = call("references", map[string]any{"path": "a/a.go", "line": 4, "symbol": "N"})
	assert.Contains(t, res.Content, "b/b.go:5:15: var X int = a.N()")
	assert.Contains(t, res.Content, "c/c.go:9:41:")
	assert.NotContains(t, res.Content, "\na/a.go:4", "no declaration unless asked")
	res = call("references", map[string]any{"path": "a/a.go", "line": 4, "symbol": "N", "includeDeclaration": true})
	assert.Contains(t, res.Content, "\na/a.go:4:6: func N() int")
	res = call("hover", map[string]any{"path": "b/b.go", "line": 5, "symbol": "N"})
	assert.Contains(t, res.Content, "N() int")
	assert.Contains(t, res.Content, "N is a number.")
	res = call("symbols", map[string]any{"path": "c/c.go"})
	assert.Contains(t, res.Content, "function S  c/c.go:9")
	res = call("symbols", map[string]any{"path": "c/c.go", "query": "N"})
	assert.Contains(t, res.Content, "\nfunction example.com/m/a.N  a/a.go:4\n")
	assert.Contains(t, res.Content, ":64 (outside the working directory)", "errors.New, in the standard library")

	res = call("rename", map[string]any{"path": "a/a.go", "line": 4, "symbol": "N", "newName": "Num"})
	assert.Contains(t, res.Content, "Renamed to Num: 4 edits in 3 files.")
	assert.Contains(t, readTestFile(t, dir, "a/a.go"), "// Num is a number.\nfunc Num() int")
	assert.Contains(t, readTestFile(t, dir, "b/b.go"), "var X int = a.Num()")
	assert.Contains(t, readTestFile(t, dir, "c/c.go"), "strconv.Itoa(a.Num())")
	res = call("diagnostics", map[string]any{"path": "c/c.go"})
	assert.Equal(t, "gopls reports no errors or warnings in c/c.go.", res.Content)

	call("edit_file", map[string]any{"path": "c/c.go", "oldText": "a.Num()", "newText": "a.N()"})
	res = call("diagnostics", map[string]any{})
	assert.True(t, strings.HasPrefix(res.Content, "The language servers report 1 error and 0 warnings:\nc/c.go:9:"), res.Content)
}
