package search_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/search"
)

type item struct {
	path string
	line int
	text string
}

func newItem(path string, line int, text string) item { return item{path, line, text} }

// answerOf searches files (path to content) with pattern and writes the
// answer, adding the files in the order given.
func answerOf(t *testing.T, pattern string, limit, ctxLines, maxBytes int, files ...string) search.Answer[item] {
	t.Helper()
	q, err := search.Compile(pattern, false, false, ctxLines)
	require.NoError(t, err)
	col := search.NewCollector(limit)
	s := search.NewSearcher(q, limit, maxBytes)
	for i := 0; i+1 < len(files); i += 2 {
		res, err := s.Search(context.Background(), strings.NewReader(files[i+1]))
		require.NoError(t, err)
		col.Add(files[i], res)
	}
	a, err := search.Write(col, search.Options[item]{MaxBytes: maxBytes, Context: ctxLines, Item: newItem, Parts: 2,
		Name: func(rel string) string { return strings.ToUpper(rel) }})
	require.NoError(t, err)
	return a
}

// TestWriteOrdersAndLists: files added in any order are written in path
// order, each line behind its (renamed) path, and the items are the
// matches shown, their text taken from the answer.
func TestWriteOrdersAndLists(t *testing.T) {
	a := answerOf(t, "hit", 100, 0, 1<<20, "b.txt", "x\nhit two\n", "a.txt", "hit one\nno\nhit three\n", "c.txt", "nothing\n")
	assert.Equal(t, "A.TXT:1: hit one\nA.TXT:3: hit three\nB.TXT:2: hit two", a.Text)
	assert.Equal(t, 3, a.Total)
	assert.Equal(t, []item{{"A.TXT", 1, "hit one"}, {"A.TXT", 3, "hit three"}, {"B.TXT", 2, "hit two"}}, a.Items)
}

// TestWriteItemsLineNumbers: the items' line numbers are those the answer
// shows, of any number of digits, with context lines between them.
func TestWriteItemsLineNumbers(t *testing.T) {
	var body strings.Builder
	want := []item{}
	for n := 1; n <= 123456; n++ {
		if n == 1 || n == 10 || n == 99 || n == 1000 || n == 123456 {
			fmt.Fprintf(&body, "hit %d\n", n)
			want = append(want, item{"F", n, fmt.Sprintf("hit %d", n)})
			continue
		}
		body.WriteString("x\n")
	}
	for _, ctxLines := range []int{0, 2} {
		a := answerOf(t, "hit", 100, ctxLines, 1<<30, "f", body.String())
		assert.Equal(t, want, a.Items, "context %d", ctxLines)
		for _, it := range want {
			assert.Contains(t, a.Text+"\n", fmt.Sprintf("F:%d: hit %d\n", it.line, it.line))
		}
	}
}

// TestWriteCuts: the limit and the size cap end the answer with a notice
// that says which one, and the items stop where the answer does.
func TestWriteCuts(t *testing.T) {
	var body strings.Builder
	for i := range 50 {
		fmt.Fprintf(&body, "hit %d\nmiss\n", i)
	}
	limited := answerOf(t, "hit", 3, 1, 1<<20, "f", body.String())
	assert.Equal(t, "F:1: hit 0\nF-2- miss\nF:3: hit 1\nF-4- miss\nF:5: hit 2\nF-6- miss\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern]", limited.Text)
	assert.Len(t, limited.Items, 3)
	capped := answerOf(t, "hit", 1000, 0, 300, "f", body.String())
	assert.LessOrEqual(t, len(capped.Text), 300)
	assert.Contains(t, capped.Text, "\n\n[Output truncated at 300B after ")
	assert.Equal(t, strings.Count(capped.Text, "hit"), len(capped.Items))
	assert.Equal(t, 50, capped.Total)
	none := answerOf(t, "zzz", 10, 0, 1<<20, "f", body.String())
	assert.Equal(t, "No matches found", none.Text)
	assert.Empty(t, none.Items)
}

// TestCompileRefusesLineBreaks: a pattern that can only match across
// lines is ErrNewline; classes lose their '\n'.
func TestCompileRefusesLineBreaks(t *testing.T) {
	_, err := search.Compile(`a\nb`, false, false, 0)
	require.ErrorIs(t, err, search.ErrNewline)
	_, err = search.Compile("a\nb", true, true, 0)
	require.ErrorIs(t, err, search.ErrNewline)
	_, err = search.Compile("a(b", false, false, 0)
	require.ErrorContains(t, err, "not a valid regular expression")
	q, err := search.Compile(`a[^q]*b`, false, false, 0)
	require.NoError(t, err)
	res, err := search.NewSearcher(q, 10, 0).Search(context.Background(), bytes.NewReader([]byte("a\nb\n")))
	require.NoError(t, err)
	assert.Zero(t, res.Matches())
}

// TestWriteManyFilesInParts: an answer of more files than the collector
// sorts in two halves, with goroutines, is the one written without them:
// files in path order (the halves merged), each part at its place.
func TestWriteManyFilesInParts(t *testing.T) {
	q, err := search.Compile("hit", false, false, 0)
	require.NoError(t, err)
	const files = 5000
	rng := rand.New(rand.NewPCG(1, 2))
	names := make([]string, files)
	for i := range names {
		names[i] = fmt.Sprintf("d%d/f%04d", i%7, i)
	}
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	write := func(parts int, goFn func(string, func() error) <-chan error) search.Answer[item] {
		col := search.NewCollector(1 << 30)
		s := search.NewSearcher(q, 1<<30, 0)
		for _, name := range names {
			res, err := s.Search(context.Background(), strings.NewReader(strings.Repeat("hit "+name+"\nno\n", 60)))
			require.NoError(t, err)
			col.Add(name, res)
		}
		a, err := search.Write(col, search.Options[item]{MaxBytes: 1 << 30, Item: newItem, Parts: parts, Go: goFn})
		require.NoError(t, err)
		return a
	}
	goFn := func(what string, fn func() error) <-chan error { return guard.Go(what, fn, nil) }
	one, two := write(1, nil), write(2, goFn)
	require.Greater(t, len(two.Text), 2<<20, "large enough to be written in parts")
	assert.True(t, one.Text == two.Text, "the same answer")
	assert.Equal(t, one.Items, two.Items)
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	lines := strings.Split(two.Text, "\n")
	for i, name := range sorted {
		require.True(t, strings.HasPrefix(lines[60*i], name+":1: "), "line %d: %q", 60*i, lines[60*i])
	}
}
