package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the repository's root, where the core's go.mod is.
const repoRoot = "../.."

// modules lists the folders of the repository's modules: the root and
// every nested go.mod (testdata and hidden folders left out).
func modules(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != repoRoot && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && name == "go.mod" {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	require.NoError(t, err)
	return dirs
}

// goList returns the imports of every package of the module in dir
// (non-test code). A module go.work leaves out (adapters/genkit) is listed
// without the workspace, through a copy of its go.mod that replaces each of
// the repository's modules with its folder (-modfile), so the tree is read
// and nothing is written to the module's go.mod or go.sum.
func goList(t *testing.T, dir string, mods []string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = dir
	if !inWorkspace(t, dir) {
		cmd.Args = append(cmd.Args[:2], append([]string{"-mod=mod", "-modfile=" + asUserModfile(t, dir, mods)}, cmd.Args[2:]...)...)
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list in %s: %s", dir, stderr.String())
	imports := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		imports[p.ImportPath] = p.Imports
	}
	return imports
}

// inWorkspace reports whether go.work uses the module in dir.
func inWorkspace(t *testing.T, dir string) bool {
	t.Helper()
	cmd := exec.Command("go", "work", "edit", "-json")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	require.NoError(t, err, "go work edit -json")
	var work struct{ Use []struct{ DiskPath string } }
	require.NoError(t, json.Unmarshal(out, &work))
	rel, err := filepath.Rel(repoRoot, dir)
	require.NoError(t, err)
	for _, u := range work.Use {
		if filepath.Clean(u.DiskPath) == rel {
			return true
		}
	}
	return false
}

// asUserModfile writes a copy of dir's go.mod and go.sum into a temporary
// folder, the copy replacing every module of the repository (mods) with its
// folder, and returns the copy's path.
func asUserModfile(t *testing.T, dir string, mods []string) string {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	var b strings.Builder
	b.Write(gomod)
	for _, m := range mods {
		abs, err := filepath.Abs(m)
		require.NoError(t, err)
		data, err := os.ReadFile(filepath.Join(m, "go.mod"))
		require.NoError(t, err)
		path := modulePath(data)
		require.NotEmpty(t, path, "no module line in %s/go.mod", m)
		b.WriteString("\nreplace " + path + " => " + abs + "\n")
	}
	tmp := t.TempDir()
	modfile := filepath.Join(tmp, "go.mod")
	require.NoError(t, os.WriteFile(modfile, []byte(b.String()), 0o600))
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "go.sum"), sum, 0o600))
	return modfile
}

// modulePath is the path on the module line of a go.mod.
func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// TestImportRules checks the map's import rules on every module of the
// repository.
func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	all := map[string][]string{}
	mods := modules(t)
	require.Greater(t, len(mods), 1, "the core and its nested modules")
	for _, dir := range mods {
		for p, imps := range goList(t, dir, mods) {
			all[p] = imps
		}
	}
	require.Contains(t, all, Module+"/codetools")
	require.Contains(t, all, Module+"/otelkit")
	assert.Empty(t, Check(all), "imports the map (ARCHITECTURE.md, internal/importrules) forbids")
}

// Each rule can fail: a table of made-up edges, each forbidden by one rule,
// and edges the map allows.
func TestCheckFindsForbiddenEdges(t *testing.T) {
	m := func(r string) string {
		if r == "" {
			return Module
		}
		return Module + "/" + r
	}
	forbidden := map[string][2]string{
		"the root imports a package of the module":    {"", "codetools"},
		"the root imports an internal package":        {"", "internal/textutil"},
		"an internal package imports a public one":    {"internal/search", "codetools"},
		"a public package imports an engine":          {"agent", "internal/walk"},
		"a command imports an engine":                 {"cmd/llmtoolkit", "internal/proc"},
		"codetools imports agentloop":                 {"codetools", "agentloop"},
		"trace imports agentloop":                     {"trace", "agentloop"},
		"agent imports codetools":                     {"agent", "codetools"},
		"mcp imports codetools":                       {"mcp", "codetools"},
		"otelkit imported by a library package":       {"agent", "otelkit"},
		"a package off the map":                       {"newpkg", ""},
		"an adapter imports a package beside its own": {"adapters/eino", "agentloop"},
	}
	for name, e := range forbidden {
		t.Run(name, func(t *testing.T) {
			bad := Check(map[string][]string{m(e[0]): {m(e[1]), "fmt", "github.com/stretchr/testify/assert"}})
			assert.NotEmpty(t, bad)
		})
	}
	allowed := map[string][]string{
		m("codetools"):           {m(""), m("internal/search"), m("internal/walk"), "os"},
		m("internal/walk"):       {m("internal/gitignore"), m("internal/confine")},
		m("bench/cmd/grepbench"): {m("codetools"), m("internal/search")},
		m("cmd/llmtoolkit"):      {m("otelkit"), m("trace"), m("codetools"), m("mcp")},
		m("agent"):               {m(""), m("agentloop"), m("internal/redact")},
		m("adapters/mcpgo"):      {m(""), m("mcp")},
		m(""):                    {"context", m("internal/redact")},
		"example.com/other":      {m("internal/search")}, // not ours: the go command refuses it anyway
	}
	assert.Empty(t, Check(allowed))
}

func TestModulesFound(t *testing.T) {
	mods := modules(t)
	var rels []string
	for _, d := range mods {
		r, err := filepath.Rel(repoRoot, d)
		require.NoError(t, err)
		rels = append(rels, filepath.ToSlash(r))
	}
	assert.Contains(t, rels, ".")
	assert.Contains(t, rels, "otelkit")
	_, err := os.Stat(filepath.Join(repoRoot, "go.mod"))
	require.NoError(t, err)
}
