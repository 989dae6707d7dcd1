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
// (non-test code).
func goList(t *testing.T, dir string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = dir
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
		for p, imps := range goList(t, dir) {
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
