package toolsearch_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
)

// need is one natural-language need of testdata/needs.jsonl, with the
// tool that answers it and the pattern a model would write for it in
// regex mode.
type need struct {
	Need    string `json:"need"`
	Tool    string `json:"tool"`
	Pattern string `json:"pattern"`
}

// loadCatalog reads testdata/catalog.json.
func loadCatalog(t testing.TB) []catalogTool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "catalog.json"))
	require.NoError(t, err)
	var out []catalogTool
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// catalogTools is the catalog as definitions, each deferred.
func catalogTools(t testing.TB) []llmtoolkit.Tool {
	t.Helper()
	var out []llmtoolkit.Tool
	for _, c := range loadCatalog(t) {
		tool, err := llmtoolkit.NewTool(c.Name, c.Description, c.Parameters)
		require.NoError(t, err)
		tool.Deferred = true
		out = append(out, tool)
	}
	return out
}

func loadNeeds(t testing.TB) []need {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "needs.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var out []need
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var n need
		require.NoError(t, json.Unmarshal(sc.Bytes(), &n), sc.Text())
		out = append(out, n)
	}
	require.NoError(t, sc.Err())
	return out
}

// regexOfWords is the regex mode with, as pattern, the need's words
// joined with "|" (the pattern of a model that writes no better one),
// cut to the pattern's limit.
const regexOfWords toolsearch.Mode = "regex-of-words"

// wordsPattern joins the need's words of four letters or more with "|".
func wordsPattern(need string) string {
	var words []string
	for _, w := range strings.FieldsFunc(need, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 4 {
			words = append(words, regexp.QuoteMeta(w))
		}
	}
	p := strings.Join(words, "|")
	for len(p) > toolsearch.MaxPatternBytes {
		words = words[:len(words)-1]
		p = strings.Join(words, "|")
	}
	return p
}

// recallAt is the share of needs whose tool is among the first k answers.
func recallAt(t *testing.T, ix *toolsearch.Index, needs []need, mode toolsearch.Mode, k int) (float64, []string) {
	t.Helper()
	hits := 0
	var misses []string
	for _, n := range needs {
		q, m := n.Need, mode
		switch mode {
		case toolsearch.Regex:
			q = n.Pattern
		case regexOfWords:
			q, m = wordsPattern(n.Need), toolsearch.Regex
		}
		got, err := ix.Search(context.Background(), q, m, k)
		require.NoError(t, err, q)
		found := false
		for _, m := range got {
			if m.Tool.Name == n.Tool {
				found = true
			}
		}
		if found {
			hits++
		} else {
			misses = append(misses, n.Tool+" <- "+q)
		}
	}
	return float64(hits) / float64(len(needs)), misses
}

// TestRecallAt5: over the fixture catalog (at least 400 tools, near
// duplicates among them) and at least 100 needs, the right tool is among
// the first five answers for at least the share measured when this test
// was written, in each mode.
func TestRecallAt5(t *testing.T) {
	tools := catalogTools(t)
	needs := loadNeeds(t)
	require.GreaterOrEqual(t, len(tools), 400)
	require.GreaterOrEqual(t, len(needs), 100)
	names := map[string]bool{}
	for _, tool := range tools {
		names[tool.Name] = true
	}
	for _, n := range needs {
		require.True(t, names[n.Tool], "need names an unknown tool %s", n.Tool)
	}
	ix := toolsearch.NewIndex(tools)
	for _, c := range []struct {
		mode  toolsearch.Mode
		floor float64
	}{
		{toolsearch.BM25, 0.90},
		{toolsearch.Regex, 0.95},
		{regexOfWords, 0.40},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			if c.mode == regexOfWords && testing.Short() {
				t.Skip("long alternations over every tool: not in -short (the race pass)")
			}
			r, misses := recallAt(t, ix, needs, c.mode, 5)
			t.Logf("recall@5 %s: %.3f over %d needs, %d tools; misses: %q", c.mode, r, len(needs), len(tools), misses)
			assert.GreaterOrEqual(t, r, c.floor)
		})
	}
}
