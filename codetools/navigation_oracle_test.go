package codetools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
)

// locationLine is a location of a navigation answer: PATH:LINE:COLUMN:.
var locationLine = regexp.MustCompile(`(?m)^([^\s:]+):(\d+):(\d+):`)

func locationsOf(content string) []string {
	var out []string
	for _, m := range locationLine.FindAllStringSubmatch(content, -1) {
		out = append(out, m[1]+":"+m[2]+":"+m[3])
	}
	sort.Strings(out)
	return out
}

// TestTypeScriptNavigationMatchesCompilerAPI: neither
// typescript-language-server nor tsserver has a command line for
// definitions and references (pyright neither: its CLI only checks), so
// the answers of definition and references through
// typescript-language-server are compared with the TypeScript compiler
// API asked directly by a node script (testdata/ts_oracle.js), on a
// project of three files.
func TestTypeScriptNavigationMatchesCompilerAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("a real typescript-language-server: not in -short")
	}
	t.Parallel() // a real server: see "Real servers" in language_servers_test.go
	bin := testkit.LanguageServer(t, "LLMTOOLKIT_TYPESCRIPT_LANGUAGE_SERVER", "typescript-language-server")
	tsModule := filepath.Join(filepath.Dir(bin), "..", "typescript")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(tsModule); err != nil || serr != nil {
		t.Skipf("no node or no typescript package beside %s", bin)
	}
	oracle, err := filepath.Abs("testdata/ts_oracle.js")
	require.NoError(t, err)
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{
		"tsconfig.json": `{"compilerOptions": {"strict": true}}` + "\n",
		"a.ts":          "export function n(): number {\n  return 1;\n}\n",
		"b.ts":          "import { n } from \"./a\";\nexport const x: number = n();\n",
		"c.ts":          "import { n } from \"./a\";\nexport const y = n() + n();\n",
	})
	s := DefaultLanguageServers()[2]
	s.Command = []string{bin, "--stdio"}
	c, err := New(dir, WithLanguageServers(s), WithLanguageServerLimits(LanguageServerLimits{Settle: 90 * time.Second}))
	require.NoError(t, err)
	defer c.Close()
	positions := []struct {
		file      string
		line, col int
	}{{"c.ts", 2, 18}, {"b.ts", 2, 26}, {"a.ts", 1, 17}}
	oargs := []string{oracle, dir}
	for _, at := range positions {
		oargs = append(oargs, at.file, strconv.Itoa(at.line), strconv.Itoa(at.col))
	}
	cmd := exec.Command(node, oargs...) // one program for all three positions
	cmd.Env = append(os.Environ(), "TS_MODULE="+tsModule)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var wants []struct{ Definition, References []string }
	require.NoError(t, json.Unmarshal(out, &wants))
	require.Len(t, wants, len(positions))
	for i, at := range positions {
		want := wants[i]
		sort.Strings(want.Definition)
		sort.Strings(want.References)
		require.NotEmpty(t, want.References)
		args := map[string]any{"path": at.file, "line": at.line, "column": at.col}
		start := time.Now()
		res := llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: "definition", Arguments: args})
		t.Logf("definition at %s: %s", at.file, time.Since(start).Round(time.Millisecond))
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, want.Definition, locationsOf(res.Content), "definition at %v: %s", at, res.Content)
		args["includeDeclaration"] = true
		res = llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: "references", Arguments: args})
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, want.References, locationsOf(res.Content), "references at %v: %s", at, res.Content)
	}
}

// TestPyrightNavigationMatchesJedi: pyright's command line only checks
// types, so definition through pyright-langserver is compared with jedi's
// (an independent Python analyser, testdata/py_oracle.py), and its
// its references, from each of three positions of one symbol, with the
// union of jedi's from the three (jedi's search from one position misses
// uses made through another import form).
func TestPyrightNavigationMatchesJedi(t *testing.T) {
	if testing.Short() {
		t.Skip("a real pyright: not in -short")
	}
	t.Parallel() // a real server: see "Real servers" in language_servers_test.go
	bin := testkit.LanguageServer(t, "LLMTOOLKIT_PYRIGHT", "pyright-langserver")
	python, err := exec.LookPath("python3")
	if err != nil || exec.Command(python, "-c", "import jedi").Run() != nil {
		t.Skip("no python3 with jedi, the oracle")
	}
	oracle, err := filepath.Abs("testdata/py_oracle.py")
	require.NoError(t, err)
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{
		"pyrightconfig.json": "{}\n",
		"a.py":               "def n() -> int:\n    return 1\n",
		"b.py":               "from a import n\n\nx: int = n()\n",
		"c.py":               "import a\n\ny = a.n() + a.n()\n",
	})
	s := DefaultLanguageServers()[1]
	s.Command = []string{bin, "--stdio"}
	c, err := New(dir, WithLanguageServers(s), WithLanguageServerLimits(LanguageServerLimits{Settle: 90 * time.Second}))
	require.NoError(t, err)
	defer c.Close()
	union := map[string]bool{}
	got := map[string][]string{}
	for _, at := range []struct {
		file      string
		line, col int
	}{{"c.py", 3, 7}, {"b.py", 3, 10}, {"a.py", 1, 5}} {
		out, err := exec.Command(python, oracle, dir, at.file, strconv.Itoa(at.line), strconv.Itoa(at.col)).Output()
		require.NoError(t, err, "%s", out)
		var want struct{ Definition, References []string }
		require.NoError(t, json.Unmarshal(out, &want))
		sort.Strings(want.Definition)
		require.NotEmpty(t, want.References)
		args := map[string]any{"path": at.file, "line": at.line, "column": at.col}
		res := llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: "definition", Arguments: args})
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, want.Definition, locationsOf(res.Content), "definition at %v: %s", at, res.Content)
		args["includeDeclaration"] = true
		res = llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: "references", Arguments: args})
		require.False(t, res.IsError, res.Content)
		got[at.file] = locationsOf(res.Content)
		for _, r := range want.References {
			union[r] = true
		}
	}
	var all []string
	for r := range union {
		all = append(all, r)
	}
	sort.Strings(all)
	require.Len(t, all, 5, "jedi's union: the declaration, the import, three uses")
	for file, refs := range got {
		assert.Equal(t, all, refs, "references from %s", file)
	}
}
