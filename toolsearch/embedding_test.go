package toolsearch_test

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
)

// fakeEmbedder is a deterministic embedder: a text's vector counts its
// words, each word in the dimension of its concept (concepts: words that
// mean the same, as a real embedding model knows them) or else in a
// dimension of its own hash. It counts its calls and texts.
type fakeEmbedder struct {
	dims     int
	concepts map[string]int
	calls    atomic.Int64
	texts    atomic.Int64
	maxBatch atomic.Int64
	// answer, when set, replaces the vectors answered.
	answer func(texts []string) ([][]float32, error)
}

func newFakeEmbedder(concepts ...[]string) *fakeEmbedder {
	e := &fakeEmbedder{dims: 256, concepts: map[string]int{}}
	for i, group := range concepts {
		for _, w := range group {
			e.concepts[w] = i
		}
	}
	return e
}

func (e *fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.calls.Add(1)
	e.texts.Add(int64(len(texts)))
	for {
		m := e.maxBatch.Load()
		if int64(len(texts)) <= m || e.maxBatch.CompareAndSwap(m, int64(len(texts))) {
			break
		}
	}
	if e.answer != nil {
		return e.answer(texts)
	}
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, e.dims)
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
			w = strings.TrimSuffix(w, "s")
			if len(w) < 3 {
				continue
			}
			d, ok := e.concepts[w]
			if !ok {
				h := fnv.New32a()
				h.Write([]byte(w))
				d = len(e.concepts) + int(h.Sum32()%uint32(e.dims-len(e.concepts)))
			}
			v[d]++
		}
		out[i] = v
	}
	return out, nil
}

// musicConcepts are the fake model's synonyms for TestHybridFindsSynonymOnlyMatch.
var musicConcepts = [][]string{
	{"tune", "track", "song"},
	{"now", "currently", "playing", "blasting"},
}

// TestHybridFindsSynonymOnlyMatch: a need that shares no word with the
// tool that answers it ("tune" for "track", "blasting" for "playing"),
// and is in no equivalents group, is not in BM25's first five over the
// third catalog; the fusion with a (deterministic, fake) embedder's
// ranking puts it there.
func TestHybridFindsSynonymOnlyMatch(t *testing.T) {
	tools := catalogFileTools(t, "catalog3.json")
	const need, want = "which tune is blasting", "spotify_get_current_track"
	e := newFakeEmbedder(musicConcepts...)
	ix := toolsearch.NewIndexWith(tools, toolsearch.WithEmbeddings(e, nil))

	rank := func(mode toolsearch.Mode) int {
		got, err := ix.Search(t.Context(), need, mode, 5)
		require.NoError(t, err)
		for i, m := range got {
			if m.Tool.Name == want {
				return i + 1
			}
		}
		return 0
	}
	assert.Zero(t, rank(toolsearch.BM25), "BM25 alone does not find it")
	r := rank(toolsearch.Hybrid)
	t.Logf("%q: %s is %d of hybrid's first five", need, want, r)
	assert.NotZero(t, r, "the fusion ranks it among the first five")
	assert.Equal(t, int64(len(tools)+1), e.texts.Load(), "each tool embedded once, the query once")
}

// TestHybridEmbedsOnceInBatches: tools are embedded in batches of at
// most EmbedBatch, once: an index built again over the same tools with
// the same cache embeds only the tools that are new or changed.
func TestHybridEmbedsOnceInBatches(t *testing.T) {
	tools := catalogFileTools(t, "catalog3.json")
	e := newFakeEmbedder()
	cache := toolsearch.NewVectorCache(0)
	ix := toolsearch.NewIndexWith(tools, toolsearch.WithEmbeddings(e, cache))
	_, err := ix.Search(t.Context(), "post a tweet", toolsearch.Hybrid, 5)
	require.NoError(t, err)
	assert.Equal(t, int64(len(tools)+1), e.texts.Load())
	assert.LessOrEqual(t, e.maxBatch.Load(), int64(toolsearch.EmbedBatch))
	assert.Equal(t, int64((len(tools)+toolsearch.EmbedBatch-1)/toolsearch.EmbedBatch+1), e.calls.Load())
	assert.Equal(t, len(tools), cache.Len())

	changed := append([]llmtoolkit.Tool(nil), tools...)
	changed[0].Description += " Changed."
	changed = append(changed, llmtoolkit.MustTool("brand_new", "A new tool.", nil))
	e.texts.Store(0)
	again := toolsearch.NewIndexWith(changed, toolsearch.WithEmbeddings(e, cache))
	_, err = again.Search(t.Context(), "post a tweet", toolsearch.Hybrid, 5)
	require.NoError(t, err)
	assert.Equal(t, int64(2+1), e.texts.Load(), "the changed tool, the new one and the query")

	bounded := toolsearch.NewVectorCache(10)
	_, err = toolsearch.NewIndexWith(tools, toolsearch.WithEmbeddings(e, bounded)).Search(t.Context(), "x", toolsearch.Hybrid, 5)
	require.NoError(t, err)
	assert.Equal(t, 10, bounded.Len(), "the cache keeps no more than its bound")
}

// TestHybridEmbedderErrors: what an embedder fails or answers wrong is
// a clear error wrapping ErrEmbedding (and the embedder's own), the
// search answers nothing, and a later search tries again.
func TestHybridEmbedderErrors(t *testing.T) {
	tools := []llmtoolkit.Tool{
		llmtoolkit.MustTool("a_tool", "Does a.", nil),
		llmtoolkit.MustTool("b_tool", "Does b.", nil),
	}
	boom := errors.New("provider said 429")
	for _, c := range []struct {
		name   string
		answer func([]string) ([][]float32, error)
		want   string
	}{
		{"error", func([]string) ([][]float32, error) { return nil, boom }, "provider said 429"},
		{"too few", func(texts []string) ([][]float32, error) { return make([][]float32, len(texts)-1), nil }, "vectors for"},
		{"no dimensions", func(texts []string) ([][]float32, error) { return make([][]float32, len(texts)), nil }, "0 dimensions"},
		{"too many dimensions", func(texts []string) ([][]float32, error) {
			return fill(len(texts), toolsearch.MaxEmbeddingDims+1, 1), nil
		}, "8193 dimensions"},
		{"mixed dimensions", func(texts []string) ([][]float32, error) {
			out := fill(len(texts), 4, 1)
			out[len(out)-1] = []float32{1, 2}
			return out, nil
		}, "dimensions"},
		{"not a number", func(texts []string) ([][]float32, error) { return fill(len(texts), 4, float32(math.NaN())), nil }, "not a finite number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newFakeEmbedder()
			e.answer = c.answer
			ix := toolsearch.NewIndexWith(tools, toolsearch.WithEmbeddings(e, nil))
			got, err := ix.Search(t.Context(), "does a", toolsearch.Hybrid, 5)
			require.Error(t, err)
			assert.ErrorIs(t, err, toolsearch.ErrEmbedding)
			assert.Contains(t, err.Error(), c.want)
			assert.Nil(t, got)
			if c.name == "error" {
				assert.ErrorIs(t, err, boom)
			}
			e.answer = nil
			got, err = ix.Search(t.Context(), "does a", toolsearch.Hybrid, 5)
			require.NoError(t, err, "a later search embeds again")
			assert.Equal(t, "a_tool", got[0].Tool.Name)
		})
	}
}

func fill(n, dims int, x float32) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dims)
		for d := range out[i] {
			out[i][d] = x
		}
	}
	return out
}

// TestHybridHonoursContext: a cancelled context stops a hybrid search
// before the embedder is called, and a search waiting for another's
// embedding of the tools answers at the end of its own context.
func TestHybridHonoursContext(t *testing.T) {
	tools := []llmtoolkit.Tool{llmtoolkit.MustTool("a_tool", "Does a.", nil)}
	e := newFakeEmbedder()
	ix := toolsearch.NewIndexWith(tools, toolsearch.WithEmbeddings(e, nil))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := ix.Search(ctx, "does a", toolsearch.Hybrid, 5)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, e.calls.Load())

	release := make(chan struct{})
	entered := make(chan struct{})
	e.answer = func(texts []string) ([][]float32, error) {
		close(entered)
		<-release
		return newFakeEmbedder().Embed(context.Background(), texts)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ix.Search(context.Background(), "does a", toolsearch.Hybrid, 5)
		done <- err
	}()
	<-entered
	short, cancelShort := context.WithCancel(t.Context())
	cancelShort()
	_, err = ix.Search(short, "does a", toolsearch.Hybrid, 5)
	assert.ErrorIs(t, err, context.Canceled)
	e.answer = nil
	close(release)
	require.NoError(t, <-done)
}

// TestHybridWithoutEmbedderIsBM25: an index without an embedder answers
// Hybrid as BM25.
func TestHybridWithoutEmbedderIsBM25(t *testing.T) {
	ix := toolsearch.NewIndex(catalogFileTools(t, "catalog3.json"))
	lexical, err := ix.Search(t.Context(), "post a tweet", toolsearch.BM25, 5)
	require.NoError(t, err)
	hybrid, err := ix.Search(t.Context(), "post a tweet", toolsearch.Hybrid, 5)
	require.NoError(t, err)
	assert.Equal(t, lexical, hybrid)
}

// TestResolverWithEmbedder: a Resolver with an embedder searches in
// hybrid mode, concurrently, embedding each tool once while it lives
// even when its list changes, and answers the embedder's error as the
// search's.
func TestResolverWithEmbedder(t *testing.T) {
	ok := func(_ context.Context, c llmtoolkit.Call) (string, error) { return c.Name + " ran", nil }
	fake := &lt.Fake{}
	tools := catalogFileTools(t, "catalog3.json")
	for _, tool := range tools {
		fake.Add(tool, ok)
	}
	e := newFakeEmbedder(musicConcepts...)
	s := toolsearch.New(fake, toolsearch.WithEmbedder(e))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			res := llmtoolkit.Execute(context.Background(), s, llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": "which tune is blasting", "limit": 3}})
			assert.False(t, res.IsError, res.Content)
			assert.Contains(t, res.Content, "spotify_get_current_track")
		})
	}
	wg.Wait()
	assert.Equal(t, int64(len(tools)+4), e.texts.Load(), "the tools once, the query once a search")

	fake.Add(llmtoolkit.Tool{Name: "new_tool", Description: "A new one.", Deferred: true}, ok)
	res := llmtoolkit.Execute(context.Background(), s, llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": "a new one"}})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, int64(len(tools)+4+2), e.texts.Load(), "the new tool and the query")

	e.answer = func([]string) ([][]float32, error) { return nil, errors.New("endpoint down") }
	res = llmtoolkit.Execute(context.Background(), s, llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": "something else"}})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "endpoint down")
	assert.ErrorIs(t, res.Err, toolsearch.ErrEmbedding)
}
