package patch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// referenceVersion is the @openai/agents-core that scripts/v4a_reference.sh
// installs; keep the two equal.
const referenceVersion = "0.20.0"

// referenceDir finds the installed reference: $LLMTOOLKIT_V4A_DIR or the
// script's default folder. Without node or the package the test skips,
// unless CI is set, where it fails.
func referenceDir(t *testing.T) (node, pkg string) {
	t.Helper()
	dir := os.Getenv("LLMTOOLKIT_V4A_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "llmtoolkit-v4a-"+referenceVersion)
	}
	pkg = filepath.Join(dir, "node_modules", "@openai", "agents-core")
	node, err := exec.LookPath("node")
	_, serr := os.Stat(filepath.Join(pkg, "package.json"))
	if err != nil || serr != nil {
		msg := fmt.Sprintf("the reference applier is missing (node: %v; %s: %v); run scripts/v4a_reference.sh", err, pkg, serr)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, pkg
}

type refResult struct {
	OK    bool              `json:"ok"`
	Files map[string]string `json:"files"`
	Error string            `json:"error"`
}

// TestReferenceApplier runs every case of the corpus through this engine
// and through the Agents SDK's applyDiff (testdata/v4a_reference.js), and
// sorts the outcomes: applied identically, refused by both, or a
// disagreement, which must be one the package doc explains. It logs the
// counts (go test -v) and fails on any other disagreement.
func TestReferenceApplier(t *testing.T) {
	if testing.Short() {
		t.Skip("the differential run is left out of -short (scripts/v4a_reference.sh runs it)")
	}
	node, pkg := referenceDir(t)
	cases := corpus()
	require.GreaterOrEqual(t, len(cases), 200)
	input, err := json.Marshal(map[string]any{"cases": cases})
	require.NoError(t, err)
	cmd := exec.Command(node, filepath.Join("testdata", "v4a_reference.js"))
	cmd.Env = append(os.Environ(), "V4A_AGENTS_CORE="+pkg)
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var refs []refResult
	require.NoError(t, json.Unmarshal(out, &refs))
	require.Len(t, refs, len(cases))

	counts := map[string]int{}
	byKind := map[string]map[string]int{}
	for i, c := range cases {
		ours, ourErr := applyCase(t, c)
		verdict := classify(c, ours, ourErr, refs[i])
		counts[verdict]++
		if byKind[c.Kind] == nil {
			byKind[c.Kind] = map[string]int{}
		}
		byKind[c.Kind][verdict]++
		if strings.HasPrefix(verdict, "unexplained") {
			t.Errorf("%s: %s\nours: %v %q\nreference: ok=%v %q\nours: %q\nreference: %q\npatch:\n%s",
				c.Name, verdict, ourErr == nil, errText(ourErr), refs[i].OK, refs[i].Error, ours, refs[i].Files, c.Patch)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d cases against @openai/agents-core@%s applyDiff:\n", len(cases), referenceVersion)
	for _, k := range sortedCounts(counts) {
		fmt.Fprintf(&b, "  %-58s %d\n", k, counts[k])
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(&b, "  %-20s", k)
		for _, v := range sortedCounts(byKind[k]) {
			fmt.Fprintf(&b, " %s=%d", v, byKind[k][v])
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}

func sortedCounts(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// applyCase applies a case with this engine in a fresh root and returns
// the files after it (folders left out).
func applyCase(t *testing.T, c refCase) (map[string]string, error) {
	files, dir, outside := newRoot(t)
	tree := map[string]string{}
	for p, v := range c.Files {
		tree[p] = v
	}
	for _, d := range c.Dirs {
		tree[d+"/"] = ""
	}
	writeTree(t, dir, tree)
	before := readTree(t, dir)
	ops, err := Parse(c.Patch)
	if err == nil {
		_, err = Apply(context.Background(), files, ops)
	}
	after := readTree(t, dir)
	if err != nil {
		require.Equal(t, before, after, "%s: a refused patch wrote", c.Name)
	}
	require.Equal(t, map[string]string{"secret.txt": "secret\n"}, readTree(t, outside))
	got := map[string]string{}
	for p, v := range after {
		if !strings.HasSuffix(p, "/") {
			got[p] = v
		}
	}
	return got, err
}

// classify names the outcome of one case; a disagreement is explained
// only by a departure the package doc lists.
func classify(c refCase, ours map[string]string, ourErr error, ref refResult) string {
	switch {
	case ourErr != nil && !ref.OK:
		return "refused by both"
	case ourErr == nil && ref.OK:
		if mapsEqual(ours, ref.Files) {
			return "applied identically"
		}
		if addedNewlineOnly(c, ours, ref.Files) {
			return "differs by design: an added file ends with a newline"
		}
		if bomOnly(c, ours, ref.Files) {
			return "differs by design: the BOM is kept"
		}
		return "unexplained: both applied, different files"
	case ourErr != nil && ref.OK:
		switch {
		case errors.Is(ourErr, ErrExists) && strings.Contains(ourErr.Error(), "Move to"):
			return "refused by design: a move onto an existing file"
		case errors.Is(ourErr, ErrNoMatch) && strings.Contains(ourErr.Error(), "anchor"):
			return "refused by design: an anchor in no line of the file"
		}
		return "unexplained: refused here only"
	default:
		return "unexplained: refused by the reference only"
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// addedNewlineOnly: the files differ only in that files the patch adds end
// with "\n" here and without it in the reference.
func addedNewlineOnly(c refCase, ours, ref map[string]string) bool {
	if len(ours) != len(ref) {
		return false
	}
	for k, v := range ours {
		w := ref[k]
		if v == w {
			continue
		}
		if !strings.Contains(c.Patch, "*** Add File: "+k+"\n") || v != w+"\n" {
			return false
		}
	}
	return true
}

// bomOnly: the files differ only in a BOM the reference dropped with the
// first line it changed.
func bomOnly(c refCase, ours, ref map[string]string) bool {
	if len(ours) != len(ref) {
		return false
	}
	for k, v := range ours {
		w := ref[k]
		if v != w && (!strings.HasPrefix(c.Files[k], bom) || v != bom+w) {
			return false
		}
	}
	return true
}
