package toolsearch

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// Embedder turns texts into vectors: the host's embedding endpoint (its
// provider's embeddings API, a local model). Embed answers one vector per
// text, in order, all of one dimension; vectors are compared by cosine,
// so their length does not matter. It must honour ctx.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ErrEmbedding is wrapped by the error of a [Hybrid] search whose
// embedder failed or answered what cannot be used: not one vector per
// text, vectors of different dimensions, of none or more than
// [MaxEmbeddingDims], or with a value that is not a finite number.
var ErrEmbedding = errors.New("tool search embedding failed")

// Bounds of the embeddings.
const (
	// MaxEmbeddingDims bounds the dimension of an embedder's vectors.
	MaxEmbeddingDims = 8192
	// EmbedBatch is how many texts one Embed call is given at most.
	EmbedBatch = 64
	// maxEmbedTextBytes bounds the text of one tool given to the
	// embedder.
	maxEmbedTextBytes = 2048
	// rrfK is reciprocal rank fusion's constant (Cormack, Clarke and
	// Büttcher 2009): a document's fused score is the sum over the
	// rankings of 1/(rrfK + its rank).
	rrfK = 60
	// fusionDepth is how deep each ranking is read for the fusion.
	fusionDepth = 50
	// maxCachedVectors bounds a VectorCache by default.
	maxCachedVectors = 100_000
)

// VectorCache keeps tools' vectors by a hash of their definition (name,
// description, parameters), so that a tool is embedded once however
// often the index over it is built again (a Resolver builds it again
// whenever its list of tools changes). It is safe for concurrent use; its
// size is bounded: past the bound, new vectors are used but not kept.
type VectorCache struct {
	mu  sync.Mutex
	m   map[[32]byte][]float32
	max int
}

// NewVectorCache returns a cache of at most max vectors (100,000 when max
// is not positive).
func NewVectorCache(max int) *VectorCache {
	if max <= 0 {
		max = maxCachedVectors
	}
	return &VectorCache{m: map[[32]byte][]float32{}, max: max}
}

// Len is the number of vectors kept.
func (c *VectorCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *VectorCache) get(k [32]byte) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *VectorCache) put(k [32]byte, v []float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) < c.max {
		c.m[k] = v
	}
}

// definitionHash identifies a tool's definition: its name, description
// and parameters (JSON, keys sorted), and the server's name.
func definitionHash(t llmtoolkit.Tool) [32]byte {
	h := sha256.New()
	h.Write([]byte(t.Name))
	h.Write([]byte{0})
	h.Write([]byte(t.Description))
	h.Write([]byte{0})
	h.Write([]byte(serverOf(t)))
	h.Write([]byte{0})
	params, err := json.Marshal(t.Parameters)
	if err != nil {
		params = fmt.Appendf(nil, "%v", t.Parameters)
	}
	h.Write(params)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// embedText is what the embedder reads of a tool: its name with spaces
// for separators, its server, its description and its argument names.
func embedText(t llmtoolkit.Tool, d *document) string {
	var b strings.Builder
	b.WriteString(strings.NewReplacer("_", " ", "-", " ").Replace(t.Name))
	if d.server != "" {
		b.WriteString(" (" + d.server + ")")
	}
	b.WriteString(": ")
	b.WriteString(t.Description)
	if len(d.names) > 0 {
		b.WriteString(" Arguments: " + strings.Join(d.names, ", ") + ".")
	}
	return textutil.CutUTF8(b.String(), maxEmbedTextBytes)
}

// vectors are an index's tool vectors, computed at the first Hybrid
// search.
type vectors struct {
	embedder Embedder
	cache    *VectorCache
	// sem holds the right to compute: a search waiting for another's
	// computation still answers by the end of its ctx.
	sem  chan struct{}
	done bool
	vecs [][]float32 // normalized, one a tool
	dims int
}

// toolVectors returns the index's tool vectors, computing those the cache
// lacks, EmbedBatch texts a call.
func (ix *Index) toolVectors(ctx context.Context) ([][]float32, error) {
	v := ix.vec
	select {
	case v.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-v.sem }()
	if v.done {
		return v.vecs, nil
	}
	vecs := make([][]float32, len(ix.tools))
	keys := make([][32]byte, len(ix.tools))
	var todo []int
	for i, t := range ix.tools {
		keys[i] = definitionHash(t)
		if got, ok := v.cache.get(keys[i]); ok {
			vecs[i] = got
		} else {
			todo = append(todo, i)
		}
	}
	for start := 0; start < len(todo); start += EmbedBatch {
		batch := todo[start:min(start+EmbedBatch, len(todo))]
		texts := make([]string, len(batch))
		for k, i := range batch {
			texts[k] = embedText(ix.tools[i], &ix.docs[i])
		}
		got, err := ix.embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("embedding tools %d-%d of %d: %w", start+1, start+len(batch), len(todo), err)
		}
		for k, i := range batch {
			vecs[i] = got[k]
			v.cache.put(keys[i], got[k])
		}
	}
	dims := 0
	for i, vec := range vecs {
		if dims == 0 {
			dims = len(vec)
		}
		if len(vec) != dims {
			return nil, fmt.Errorf("%w: tool %q has a vector of %d dimensions, others %d (a cache shared by two embedders?)", ErrEmbedding, ix.tools[i].Name, len(vec), dims)
		}
	}
	v.vecs, v.dims, v.done = vecs, dims, true
	return vecs, nil
}

// embed calls the embedder on texts and checks and normalizes what it
// answers.
func (ix *Index) embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	got, err := ix.vec.embedder.Embed(ctx, texts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", ErrEmbedding, errors.Join(ctx.Err(), err))
		}
		return nil, fmt.Errorf("%w: %w", ErrEmbedding, err)
	}
	if len(got) != len(texts) {
		return nil, fmt.Errorf("%w: the embedder answered %d vectors for %d texts", ErrEmbedding, len(got), len(texts))
	}
	out := make([][]float32, len(got))
	for k, vec := range got {
		if len(vec) == 0 || len(vec) > MaxEmbeddingDims {
			return nil, fmt.Errorf("%w: vector %d has %d dimensions (1 to %d)", ErrEmbedding, k, len(vec), MaxEmbeddingDims)
		}
		if k > 0 && len(vec) != len(got[0]) {
			return nil, fmt.Errorf("%w: vector %d has %d dimensions, vector 0 %d", ErrEmbedding, k, len(vec), len(got[0]))
		}
		n, err := normalize(vec)
		if err != nil {
			return nil, fmt.Errorf("%w: vector %d: %w", ErrEmbedding, k, err)
		}
		out[k] = n
	}
	return out, nil
}

// normalize returns vec scaled to length 1, in a new slice.
func normalize(vec []float32) ([]float32, error) {
	sum := 0.0
	for _, x := range vec {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, errors.New("a value is not a finite number")
		}
		sum += f * f
	}
	out := make([]float32, len(vec))
	if sum == 0 {
		return out, nil // matches nothing
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range vec {
		out[i] = float32(float64(x) * inv)
	}
	return out, nil
}

// searchHybrid fuses the BM25 ranking and the ranking by cosine to the
// query's vector, each read fusionDepth deep, by reciprocal rank fusion.
func (ix *Index) searchHybrid(ctx context.Context, query string, limit int) ([]Match, error) {
	lexical, err := ix.rankBM25(ctx, query, fusionDepth)
	if err != nil {
		return nil, err
	}
	tools, err := ix.toolVectors(ctx)
	if err != nil {
		return nil, err
	}
	q, err := ix.embed(ctx, []string{textutil.CutUTF8(query, maxEmbedTextBytes)})
	if err != nil {
		return nil, fmt.Errorf("embedding the query: %w", err)
	}
	if len(q[0]) != ix.vec.dims && len(tools) > 0 {
		return nil, fmt.Errorf("%w: the query's vector has %d dimensions, the tools' %d", ErrEmbedding, len(q[0]), ix.vec.dims)
	}
	semantic := nearest(ctx, tools, q[0], fusionDepth)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	scores := map[int]float64{}
	for r, i := range lexical {
		scores[i] += 1 / float64(rrfK+r+1)
	}
	for r, i := range semantic {
		scores[i] += 1 / float64(rrfK+r+1)
	}
	return ix.best(scores, nil, limit), nil
}

// nearest returns the positions of the k vectors most similar to q (dot
// product of normalized vectors: cosine), best first, ties in list order.
// Vectors with no similarity above zero are left out.
func nearest(ctx context.Context, vecs [][]float32, q []float32, k int) []int {
	sims := make([]float64, len(vecs))
	var candidates []int
	for i, v := range vecs {
		if i%1024 == 0 && ctx.Err() != nil {
			return nil
		}
		var s float32
		for d := range v {
			s += v[d] * q[d]
		}
		if s > 0 {
			sims[i] = float64(s)
			candidates = append(candidates, i)
		}
	}
	return topK(sims, candidates, k)
}
