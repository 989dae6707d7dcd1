package lsp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
)

// goProject writes a module of three packages and returns its folder.
func goProject(t *testing.T) string {
	dir := t.TempDir()
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	files := map[string]string{
		"go.mod":  "module example.com/proj\n\ngo 1.22\n",
		"a/a.go":  "package a\n\nimport \"strconv\"\n\n// Hello says n.\nfunc Hello(n int) string { return strconv.Itoa(n) }\n",
		"b/b.go":  "package b\n\nimport \"example.com/proj/a\"\n\n// Use calls Hello twice.\nfunc Use() string { return a.Hello(1) + a.Hello(2) }\n",
		"main.go": "package main\n\nimport (\n\t\"example.com/proj/a\"\n\t\"example.com/proj/b\"\n)\n\nfunc main() { println(a.Hello(3), b.Use()) }\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	return dir
}

// goplsSpec is the catalog's gopls at the path the tests found.
func goplsSpec(t *testing.T) Spec {
	bin := testkit.LanguageServer(t, "LLMTOOLKIT_GOPLS", "gopls")
	spec := Catalog()[0]
	require.Equal(t, "gopls", spec.Name)
	spec.Command = []string{bin}
	spec.Env = []string{"GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}
	return spec
}

// goplsCLI runs gopls's own command line in dir.
func goplsCLI(t *testing.T, spec Spec, dir string, args ...string) string {
	cmd := exec.Command(spec.Command[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), spec.Env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "gopls %v: %s", args, out)
	return string(out)
}

var cliLocation = regexp.MustCompile(`(?m)^(\S+\.go):(\d+):(\d+)-`)

// cliLocations reads "path:line:col-col" lines as path:line:col.
func cliLocations(out string) []string {
	var locs []string
	for _, m := range cliLocation.FindAllStringSubmatch(out, -1) {
		locs = append(locs, m[1]+":"+m[2]+":"+m[3])
	}
	return locs
}

func shown(locs []Location) []string {
	out := make([]string, len(locs))
	for i, l := range locs {
		out[i] = fmt.Sprintf("%s:%d:%d", PathOf(l.URI), l.Range.Start.Line+1, l.Range.Start.Character+1)
	}
	return out
}

// TestGopls runs one gopls over a multi-package module: a type error an
// edit introduces is reported and cleared by the fix, and definition,
// references and rename give what gopls's command line gives.
func TestGopls(t *testing.T) {
	if testing.Short() {
		t.Skip("a real gopls: not in -short (the race pass)")
	}
	spec := goplsSpec(t)
	dir := goProject(t)
	m := New(dir, []Spec{spec}, Options{ReadFile: os.ReadFile})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	t0 := time.Now()
	lap := func(what string) { t.Logf("%s: %s", what, time.Since(t0).Round(time.Millisecond)) }
	defer lap("end")
	bgo := filepath.Join(dir, "b", "b.go")
	good, err := os.ReadFile(bgo)
	require.NoError(t, err)
	bad := strings.Replace(string(good), "a.Hello(1)", `a.Hello("one")`, 1)
	rep, err := m.Diagnose(ctx, bgo, bad, 200*time.Millisecond)
	require.NoError(t, err)
	require.True(t, rep.Fresh, rep.Note)
	require.NotEmpty(t, rep.Diagnostics)
	d := rep.Diagnostics[0]
	assert.Equal(t, SeverityError, d.Severity)
	assert.Contains(t, d.Message, "cannot use")
	assert.Equal(t, 5, d.Range.Start.Line)
	assert.Equal(t, strings.Index(bad[strings.LastIndex(bad, "func Use"):], `"one"`), d.Range.Start.Character)
	rep, err = m.Diagnose(ctx, bgo, string(good), 200*time.Millisecond)
	require.NoError(t, err)
	require.True(t, rep.Fresh, rep.Note)
	assert.Empty(t, rep.Diagnostics)

	lap("diagnostics")
	// definition of Hello at its first use in b.go.
	useCol := strings.Index(string(good), "Hello(1)") - strings.LastIndex(string(good[:strings.Index(string(good), "Hello(1)")]), "\n") - 1
	defs, err := m.Definition(ctx, bgo, string(good), Position{Line: 5, Character: useCol})
	require.NoError(t, err)
	want := cliLocations(goplsCLI(t, spec, dir, "definition", bgo+":6:"+strconv.Itoa(useCol+1)))
	require.NotEmpty(t, want)
	assert.Equal(t, want, shown(defs))

	lap("definition")
	// references of Hello from its declaration (the CLI leaves the
	// declaration out unless -d).
	agoPath := filepath.Join(dir, "a", "a.go")
	ago, err := os.ReadFile(agoPath)
	require.NoError(t, err)
	declCol := len("func ")
	refs, err := m.References(ctx, agoPath, string(ago), Position{Line: 5, Character: declCol}, false)
	require.NoError(t, err)
	want = cliLocations(goplsCLI(t, spec, dir, "references", agoPath+":6:"+strconv.Itoa(declCol+1)))
	require.Len(t, want, 3)
	assert.ElementsMatch(t, want, shown(refs))

	lap("references")
	// rename Hello to Greet: our edits, applied, give the files gopls
	// rename -w writes in a copy of the module.
	edits, err := m.Rename(ctx, agoPath, string(ago), Position{Line: 5, Character: declCol}, "Greet")
	require.NoError(t, err)
	require.Len(t, edits, 3)
	copyDir := t.TempDir()
	require.NoError(t, os.CopyFS(copyDir, os.DirFS(dir)))
	goplsCLI(t, spec, copyDir, "rename", "-w", filepath.Join(copyDir, "a", "a.go")+":6:"+strconv.Itoa(declCol+1), "Greet")
	for abs, list := range edits {
		before, err := os.ReadFile(abs)
		require.NoError(t, err)
		after, err := ApplyEdits(string(before), list)
		require.NoError(t, err)
		rel, err := filepath.Rel(dir, abs)
		require.NoError(t, err)
		theirs, err := os.ReadFile(filepath.Join(copyDir, rel))
		require.NoError(t, err)
		assert.Equal(t, string(theirs), after, rel)
	}

	st := m.Stats()
	require.Len(t, st, 1)
	t.Logf("gopls RSS %d MiB", st[0].RSS>>20)
}
