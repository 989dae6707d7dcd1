package importrules

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// rel returns path relative to [Module] ("" for the root) and whether it
// is a package of this repository.
func rel(path string) (string, bool) {
	if path == Module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, Module+"/")
	return r, ok
}

func isInternal(r string) bool { return r == "internal" || strings.HasPrefix(r, "internal/") }

// isEngine reports whether r is an engine or a package inside one.
func isEngine(r string) bool {
	for _, e := range Engines {
		if r == e || strings.HasPrefix(r, e+"/") {
			return true
		}
	}
	return false
}

// isProgram reports whether r is a command, an example, a benchmark or one
// of the repository's tools (tools/: the release's apicount and modproxy).
func isProgram(r string) bool {
	for _, p := range []string{"cmd/", "examples/", "bench/", "tools/"} {
		if strings.HasPrefix(r, p) {
			return true
		}
	}
	return strings.Contains(r, "/examples/") // a nested module's examples
}

func show(r string) string {
	if r == "" {
		return "the root package"
	}
	return r
}

// Check returns the edges of imports (import path to the import paths it
// imports, non-test code) that the rules forbid, one line each, sorted.
// Paths outside [Module] are third-party or standard and always allowed.
func Check(imports map[string][]string) []string {
	var bad []string
	for from, tos := range imports {
		f, ok := rel(from)
		if !ok {
			continue
		}
		rule, placed := Allowed[f]
		switch {
		case isInternal(f), isProgram(f):
		case !placed:
			bad = append(bad, fmt.Sprintf("%s is not on the map: give it a row in importrules.Allowed and ARCHITECTURE.md", show(f)))
		}
		for _, to := range tos {
			t, ok := rel(to)
			if !ok {
				continue
			}
			edge := show(f) + " imports " + show(t)
			switch {
			case isInternal(f) && !isInternal(t):
				bad = append(bad, edge+": internal packages import no public package of this module")
			case isEngine(t) && !isInternal(f) && !slices.Contains(EngineImporters, f):
				bad = append(bad, edge+": the engines are imported only by codetools (and bench/cmd/grepbench)")
			case t == "otelkit" && !slices.Contains(OtelkitImporters, f):
				bad = append(bad, edge+": nothing imports otelkit but cmd/llmtoolkit")
			case isInternal(f) || isProgram(f) || !placed:
			case isInternal(t) && !rule.Internal && !slices.Contains(rule.InternalOnly, t):
				bad = append(bad, edge+": "+show(f)+" imports no internal package")
			case !isInternal(t) && !slices.Contains(rule.Imports, t):
				bad = append(bad, fmt.Sprintf("%s: %s imports only %s", edge, show(f), allowedText(rule)))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func allowedText(r Rule) string {
	var names []string
	for _, i := range r.Imports {
		names = append(names, show(i))
	}
	if r.Internal {
		names = append(names, "internal/*")
	}
	names = append(names, r.InternalOnly...)
	if len(names) == 0 {
		return "packages outside this module"
	}
	return strings.Join(names, ", ")
}
