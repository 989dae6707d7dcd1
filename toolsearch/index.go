package toolsearch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/llmtoolkit/llmtoolkit"
)

// Mode is how a query is matched against the tools.
type Mode string

// The modes of search.
const (
	// BM25 ranks the tools by Okapi BM25 relevance to the query's words
	// (names, argument names and words of descriptions; names weigh
	// more). The query is natural language: "post a message in a Slack
	// channel".
	BM25 Mode = "bm25"
	// Regex matches the query as a regular expression (RE2 syntax, without
	// regard to case) against each field of each tool on its own: the
	// name, the description, each argument name, each argument
	// description, the server's name ([MetadataServer]), so ^ and $
	// anchor in each ("^kubectl_scale$",
	// "_merge_request$"). It ranks the matching tools by where it matched
	// (the name first) and names those fields ([Match.Fields]). The
	// query is a pattern: "slack.*(post|send)".
	Regex Mode = "regex"
	// Hybrid ranks the tools by BM25 and by the similarity of their
	// vectors to the query's (an [Embedder]'s: [WithEmbeddings],
	// [WithEmbedder]), and fuses
	// the two rankings by reciprocal rank fusion: a tool high in either
	// ranks high, so a need worded unlike any tool's text still finds it.
	// Without an embedder it is [BM25]. The query is natural language.
	Hybrid Mode = "hybrid"
)

// ErrBadQuery is wrapped by the error of a query that cannot be run: an
// empty one, a regular expression that does not compile or is too long.
var ErrBadQuery = errors.New("bad tool search query")

// MaxPatternBytes bounds a Regex query, as the providers' own regex tool
// searches do.
const MaxPatternBytes = 200

// maxQueryBytes bounds a BM25 query.
const maxQueryBytes = 4096

// Match is one tool a search found.
type Match struct {
	// Tool is the tool's definition, as the index was given it.
	Tool llmtoolkit.Tool
	// Score is its relevance: higher is better; comparable only within
	// one search.
	Score float64
	// Fields are, in [Regex] mode, the fields the pattern matched, of
	// [FieldName], [FieldDescription], [FieldArgumentName] and
	// [FieldArgumentDescription] and [FieldServer], in that order; nil in
	// [BM25] mode.
	Fields []string
}

// The fields of a tool a [Regex] pattern is matched against, each on its
// own: anchors hold in each, so "^kubectl_scale$" is the tool of that
// name and "^limit$" a tool with an argument of that name.
const (
	FieldName                = "name"
	FieldDescription         = "description"
	FieldArgumentName        = "argument name"
	FieldArgumentDescription = "argument description"
	FieldServer              = "server"
)

// MetadataServer is the key, in a tool's [llmtoolkit.Tool.Metadata], of
// the name of the MCP server or other source the tool comes from (a
// string, such as "github" or "stripe"): the search's fifth field, so
// that "create an issue on github" finds github's create_issue even where
// its name and description do not say github. mcp.Client sets it on the
// tools it lists; a host sets it on its own (agentresolver.WithMetadata).
const MetadataServer = "server"

// serverOf is the name of the server a tool comes from, "" if unknown.
func serverOf(t llmtoolkit.Tool) string {
	s, _ := t.Metadata[MetadataServer].(string)
	return s
}

// Index searches a fixed list of tools. Build it with [NewIndex]; it is
// safe for concurrent use.
type Index struct {
	tools []llmtoolkit.Tool
	docs  []document
	// BM25F statistics.
	postings map[string][]posting
	// vocab is the terms of postings that are words (not a joined run
	// such as "docusignlistenvelop"), sorted: the terms a query's
	// abbreviation begins ("ack" of "acknowledg").
	vocab  []string
	avgLen [numFields]float64
	vec    *vectors // nil without an embedder
	// stems are the stems the index made of its tools' words, read by
	// its queries (read-only: safe for concurrent searches).
	stems *stemmer
	equiv *equivalents
	// scratch keeps the per-tool state of BM25 searches
	// (*[]toolScratch) for the next one: a search over 10,000 tools
	// allocates none of it.
	scratch *sync.Pool
}

// IndexOption configures [NewIndexWith].
type IndexOption func(*indexConfig)

type indexConfig struct {
	groups   [][]string
	related  [][]string
	embedder Embedder
	cache    *VectorCache
}

// WithEmbeddings gives the index an [Embedder], for [Hybrid] searches: the
// tools are embedded at the first one (EmbedBatch texts a call), their
// vectors kept in cache by a hash of each definition, so that an index
// built again over the same tools embeds only the new ones (nil: a cache
// of the index's own).
func WithEmbeddings(e Embedder, cache *VectorCache) IndexOption {
	return func(c *indexConfig) { c.embedder, c.cache = e, cache }
}

// WithRelated adds groups of related words to [DefaultRelated] (each
// group one or two words a member): a query that uses one word of a
// group also matches, at a lower weight than equivalents, tools that use
// another.
func WithRelated(groups ...[]string) IndexOption {
	return func(c *indexConfig) { c.related = append(c.related, groups...) }
}

// WithEquivalents adds groups of equivalent words to [DefaultEquivalents]
// (each group one or two words a member): a query that uses one word of
// a group also matches tools that use another.
func WithEquivalents(groups ...[]string) IndexOption {
	return func(c *indexConfig) { c.groups = append(c.groups, groups...) }
}

// fieldServer is the position of the server's name among the fields.
const fieldServer = 4

// numFields is the number of fields of BM25F: the name, the description,
// the argument names, the argument descriptions, the server's name.
const numFields = 5

// document is one tool's searchable text.
type document struct {
	name     string // the tool's name, lower case
	desc     string // its description
	argNames string // its argument names, one a line
	argDescs string // its argument descriptions, one a line
	server   string // the name of its server (MetadataServer)
	// names and descs are the argument names and descriptions one by
	// one: a regex field each.
	names, descs []string
	all          string // the four above, one a line: one regex test rules most tools out
	folded       string // all, folded (see fold): one substring test rules out more
	length       [numFields]float64
}

// posting is one term's frequency in one document: the sum over the
// fields of its frequency in each, weighed (fieldWeights) and normalized
// by the field's length (1/(1 - b + b·length/avgLen)), computed once when
// the index is built.
type posting struct {
	doc    int32
	tf     float32
	server bool // the term is in the name of the tool's server
}

// Field weights of BM25F: a word of the name counts as three words of the
// description, an argument name as two, the server's name as one and a
// half. Each field's frequencies are
// normalized by its own length (bm25B) before they are weighed and
// summed, then saturated once (bm25K1): a long description does not
// drown a short name, and a word repeated in five fields does not count
// five times. (A grid over k1 0.8–2, b 0.1–0.6 and the name's weight 2–4
// moved the mean recall@5 of the test catalogs by less than 0.01: these
// are kept.)
const (
	weightName    = 3
	weightArgName = 2
	weightDesc    = 1
	weightArgDesc = 1
	weightServer  = 1.5
	bm25K1        = 1.2
	bm25B         = 0.3
)

// Weights of the words a query did not use itself, and of the signals
// beyond each word's BM25.
const (
	// weightEquivalent is the weight of a query's equivalent words
	// ([DefaultEquivalents]) against the words it used; a word of more
	// than one group shares it among them, so that a word of three
	// groups ("open": create, navigate...) does not weigh three times a
	// word of one.
	weightEquivalent = 0.8
	// weightRelated is the weight of a query's related words
	// ([DefaultRelated]), shared the same way.
	weightRelated = 0.4
	// weightConsumed is the weight of a word of a query that is part of
	// a two-word member of a group ("set" and "up" of "set up"): the
	// pair's meaning counts, the words less.
	weightConsumed = 0.5
	// weightJoined is the weight of two words of a query written as one
	// by a tool ("roll out" and rollout, "time off" and time_off).
	weightJoined = 1.0
	// coordExp is how much a tool's share of the query's words (each
	// with its equivalents) multiplies its score: share^coordExp. A tool
	// that meets three of four words outranks one that meets one of them
	// strongly ("call off the booking": the booking tool that cancels,
	// not the tool named call).
	coordExp = 0.5
	// serverBoost is the score a tool gains, as a share of its own, when
	// the query names its server ("find my open tickets in jira").
	serverBoost = 0.5
	// weightQuestion is the weight of what a question implies: "which",
	// "what", "who" and "how" ask for a list (the find group), "is",
	// "did" and the like for a state (the status group).
	weightQuestion = 0.5
)

var fieldWeights = [numFields]float64{weightName, weightDesc, weightArgName, weightArgDesc, weightServer}

// maxSchemaDepth bounds how deep argument names are read from a schema.
const maxSchemaDepth = 4

// NewIndex indexes tools for [Index.Search], with [DefaultEquivalents]
// and [DefaultRelated].
// The list is kept as given.
func NewIndex(tools []llmtoolkit.Tool) *Index { return NewIndexWith(tools) }

// NewIndexWith is [NewIndex] with options.
func NewIndexWith(tools []llmtoolkit.Tool, opts ...IndexOption) *Index {
	var cfg indexConfig
	for _, o := range opts {
		o(&cfg)
	}
	ix := &Index{
		scratch: &sync.Pool{},
		tools:   tools, docs: make([]document, len(tools)), postings: map[string][]posting{},
		equiv: newEquivalents(append(slices.Clone(DefaultEquivalents), cfg.groups...),
			append(slices.Clone(DefaultRelated), cfg.related...)),
	}
	var total [numFields]float64
	st := newStemmer()
	plain := map[string]bool{} // the terms that are a word, not a joined run
	// raw is each tool's terms' frequencies per field, until the fields'
	// mean lengths are known.
	raw := make([]map[string]*[numFields]float32, 0, len(tools))
	for i, t := range tools {
		var names, descs []string
		schemaArgs(t.Parameters, 0, &names, &descs)
		d := document{
			name: strings.ToLower(t.Name), desc: t.Description,
			argNames: strings.Join(names, "\n"), argDescs: strings.Join(descs, "\n"),
			names: names, descs: descs, server: serverOf(t),
		}
		tf := map[string]*[numFields]float32{}
		raw = append(raw, tf)
		for f, text := range [numFields]string{t.Name, t.Description, d.argNames, d.argDescs, d.server} {
			var ts []string
			st.tokenize(text, func(term string, joined bool) {
				ts = append(ts, term)
				if !joined {
					plain[term] = true
				}
			})
			ts = append(ts, ix.equiv.expand(ts)...)
			for _, term := range ts {
				c := tf[term]
				if c == nil {
					c = new([numFields]float32)
					tf[term] = c
				}
				c[f]++
			}
			d.length[f] = float64(len(ts))
			total[f] += d.length[f]
		}
		d.all = d.name + "\n" + d.desc + "\n" + d.argNames + "\n" + d.argDescs + "\n" + d.server
		d.folded = fold(d.all)
		ix.docs[i] = d
	}
	if len(tools) > 0 {
		for f := range total {
			ix.avgLen[f] = max(total[f]/float64(len(tools)), 1)
		}
	}
	ix.stems = st.readOnlyView()
	ix.vocab = make([]string, 0, len(plain))
	for term := range plain {
		ix.vocab = append(ix.vocab, term)
	}
	slices.Sort(ix.vocab)
	for i, tf := range raw {
		var norm [numFields]float64
		for f := range numFields {
			norm[f] = 1 / (1 - bm25B + bm25B*ix.docs[i].length[f]/ix.avgLen[f])
		}
		for term, c := range tf {
			w := 0.0
			for f, n := range c {
				w += fieldWeights[f] * float64(n) * norm[f]
			}
			ix.postings[term] = append(ix.postings[term], posting{doc: int32(i), tf: float32(w), server: c[fieldServer] > 0})
		}
	}
	if cfg.embedder != nil {
		cache := cfg.cache
		if cache == nil {
			cache = NewVectorCache(0)
		}
		ix.vec = &vectors{embedder: cfg.embedder, cache: cache, sem: make(chan struct{}, 1)}
	}
	return ix
}

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.tools) }

// Search returns at most limit tools matching query in mode, best first
// (ties in list order). It answers by the end of ctx. An unknown mode is
// BM25. A [Hybrid] search's error wraps [ErrEmbedding] when the embedder
// failed.
func (ix *Index) Search(ctx context.Context, query string, mode Mode, limit int) ([]Match, error) {
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("%w: the query is empty", ErrBadQuery)
	}
	if limit <= 0 {
		return nil, nil
	}
	switch {
	case mode == Regex:
		return ix.searchRegex(ctx, query, limit)
	case mode == Hybrid && ix.vec != nil:
		return ix.searchHybrid(ctx, query, limit)
	}
	return ix.searchBM25(ctx, query, limit)
}

func (ix *Index) searchBM25(ctx context.Context, query string, limit int) ([]Match, error) {
	scores, touched, err := ix.scoreBM25(ctx, query)
	if err != nil {
		return nil, err
	}
	top := topK(scores, touched, limit)
	out := make([]Match, len(top))
	for k, i := range top {
		out[k] = Match{Tool: ix.tools[i], Score: scores[i]}
	}
	return out, nil
}

// rankBM25 is the positions of the limit tools BM25 ranks first.
func (ix *Index) rankBM25(ctx context.Context, query string, limit int) ([]int, error) {
	scores, touched, err := ix.scoreBM25(ctx, query)
	if err != nil {
		return nil, err
	}
	return topK(scores, touched, limit), nil
}

// scoreBM25 scores the tools against query: scores has one entry a tool,
// touched the positions of those with a term of the query.
func (ix *Index) scoreBM25(ctx context.Context, query string) (scores []float64, touched []int, err error) {
	if len(query) > maxQueryBytes {
		return nil, nil, fmt.Errorf("%w: the query has %d bytes, more than %d", ErrBadQuery, len(query), maxQueryBytes)
	}
	qterms := ix.queryTerms(query)
	scores = make([]float64, len(ix.docs))
	// per is each tool's state: the concepts of the query it has a term
	// of (the first 64), whether the query names its server, and the
	// current concept's sums. hit is the tools with a term of the query,
	// whose state is zeroed again when the search ends.
	var hit []int
	st := ix.toolScratch()
	defer ix.scratch.Put(st)
	per := *st
	defer func() {
		for _, i := range hit {
			per[i] = toolScratch{}
		}
	}()
	concepts := 0
	for _, qt := range qterms {
		concepts = max(concepts, qt.concept+1)
	}
	n := float64(len(ix.docs))
	// A concept's terms (the word, its equivalents, related words,
	// abbreviations) saturate together, as one term whose frequency is
	// the sum of theirs, weighed: a tool that has a word and its group's
	// term, or three words of one group, has the concept once, not three
	// times, so that a concept met through a synonym counts near one met
	// through the word. Its idf is midway between the highest of its
	// terms' the tool has (a rare word met counts as rare) and their mean
	// weighed by frequency (a rare term of a group met in passing does
	// not make the common ones rare: "set up an event" is to create it,
	// not the booking tool that a rare group of "book" meets). What a
	// query implies (a question's list or state, a value's kind) is
	// scored on its own, at its weight.
	order := make([]int, len(qterms))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return qterms[a].concept - qterms[b].concept })
	var inConcept []int32 // the tools with a term of the concept
	flush := func() {
		for _, d := range inConcept {
			a := &per[d]
			x := float64(a.tf)
			idf := (float64(a.best) + float64(a.idf)/x) / 2
			scores[d] += idf * x * (bm25K1 + 1) / (x + bm25K1)
			a.tf, a.best, a.idf = 0, 0, 0
		}
		inConcept = inConcept[:0]
	}
	for k, o := range order {
		qt := qterms[o]
		if k > 0 && qterms[order[k-1]].concept != qt.concept {
			flush()
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		list := ix.postings[qt.term]
		if len(list) == 0 {
			continue
		}
		df := float64(len(list))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range list {
			tf := float64(p.tf)
			if per[p.doc].matched == 0 {
				hit = append(hit, int(p.doc))
			}
			per[p.doc].matched |= 1 << (qt.concept % 64)
			if qt.weight == 1 && p.server {
				per[p.doc].named = true
			}
			if qt.implied {
				scores[p.doc] += qt.weight * idf * tf * (bm25K1 + 1) / (tf + bm25K1)
				continue
			}
			a := &per[p.doc]
			if a.tf == 0 {
				inConcept = append(inConcept, p.doc)
			}
			a.tf += float32(qt.weight * tf)
			a.best = max(a.best, float32(idf))
			a.idf += float32(qt.weight * tf * idf)
		}
	}
	flush()
	// A query that names a tool's server ("in linear", "on github")
	// means that server's tools.
	for _, i := range hit {
		if per[i].named {
			scores[i] *= 1 + serverBoost
		}
	}
	// Coordination: a tool that meets more of the query's concepts ranks
	// above one that meets fewer more strongly ("call off the booking":
	// the booking tool that cancels, not the tool named call).
	if concepts > 1 && coordExp > 0 {
		total := float64(min(concepts, 64))
		for _, i := range hit {
			scores[i] *= math.Pow(float64(bits.OnesCount64(per[i].matched))/total, coordExp)
		}
	}
	return scores, hit, nil
}

// toolScratch is one tool's state during a BM25 search: the concepts of
// the query it has a term of (the first 64); the current concept's sum
// of its terms' weighed frequencies, the highest idf among them, and the
// sum of their weighed frequencies times their idf; whether the query
// names its server.
type toolScratch struct {
	matched       uint64
	tf, best, idf float32
	named         bool
}

// toolScratch is a zeroed state for each tool, from the pool or new.
func (ix *Index) toolScratch() *[]toolScratch {
	if st, ok := ix.scratch.Get().(*[]toolScratch); ok && len(*st) == len(ix.docs) {
		return st
	}
	st := make([]toolScratch, len(ix.docs))
	return &st
}

// topK returns the limit positions of candidates with the highest
// scores, best first, ties in list order, with a bounded heap: a search
// over 10,000 tools sorts 5, not all the tools with a word of the query.
func topK(scores []float64, candidates []int, limit int) []int {
	if limit <= 0 || len(candidates) == 0 {
		return nil
	}
	better := func(a, b int) bool {
		if scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		return a < b
	}
	// h is a min-heap (worst at the root) of at most limit positions.
	h := make([]int, 0, min(limit, len(candidates)))
	down := func(i int) {
		for {
			l, w := 2*i+1, i
			if l < len(h) && better(h[w], h[l]) {
				w = l
			}
			if r := l + 1; r < len(h) && better(h[w], h[r]) {
				w = r
			}
			if w == i {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for _, c := range candidates {
		switch {
		case len(h) < limit:
			h = append(h, c)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !better(h[p], h[i]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
		case better(c, h[0]):
			h[0] = c
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b int) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return h
}

// queryTerm is one distinct term of a query, with its weight.
type queryTerm struct {
	term   string
	weight float64
	// concept is the query's word (or pair of words) the term stands
	// for: the word itself, its groups' terms, its extensions; or what a
	// question implies (a list, a state).
	concept int
	// implied is a term of what the query implies, not of its words: a
	// question's list or state, a value's kind.
	implied bool
}

// queryTerms is a query's distinct terms, then its equivalents' group
// terms, at weightEquivalent.
func (ix *Index) queryTerms(query string) []queryTerm {
	qs := ix.stems
	query, kinds := values(query, ix.isServer)
	// ts are the query's terms, run[i] the run of letters and digits
	// ts[i] is of: the parts of a run and the run whole ("GitHub" gives
	// git, hub, github; "on-call" on, call, oncall) are one concept.
	var ts []string
	var run []int
	qs.tokenizeRuns(query, func(t string, _ bool, r int) {
		ts = append(ts, t)
		run = append(run, r)
	})
	var paired []int
	sources := ix.equiv.sources(ts, &paired)
	// concept is, for each position of ts, the concept it stands for: one
	// per distinct word, the words of a pair the first's.
	concept := make([]int, len(ts))
	seen := map[string]bool{}
	index := map[string]int{}
	var out []queryTerm
	n := 0
	for i, t := range ts {
		if k, ok := index[t]; ok {
			concept[i] = out[k].concept
			continue
		}
		if i > 0 && paired[i] >= pairSecond {
			concept[i] = concept[i-1-(paired[i]-pairSecond)]
		} else if i > 0 && run[i] == run[i-1] {
			concept[i] = concept[i-1]
		} else {
			concept[i] = n
			n++
		}
		seen[t] = true
		w := 1.0
		if paired[i] != notPaired {
			w = weightConsumed
		}
		index[t] = len(out)
		out = append(out, queryTerm{t, w, concept[i], false})
	}
	// The groups of one word share its weight: a word of three groups
	// ("open": create, navigate...) does not weigh three times a word of
	// one.
	at := map[string]int{}
	for _, src := range sources {
		share := 1 / float64(len(src.groups))
		for _, g := range src.groups {
			w := weightEquivalent
			if strings.HasPrefix(g, markRelated) {
				w = weightRelated
			}
			w *= share
			if k, ok := at[g]; ok {
				out[k].weight = max(out[k].weight, w)
				continue
			}
			if !seen[g] {
				seen[g] = true
				at[g] = len(out)
				out = append(out, queryTerm{g, w, concept[src.at], false})
			}
		}
	}
	// Two words written apart that a tool writes as one ("roll out"
	// rollout, "sign up" signup, "time off" time_off, "log in" login).
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	// Only a pair some tool writes as one word (or its plural) is
	// stemmed: the stems the index made.
	for i := 0; i+1 < len(words); i++ {
		if isNumber(words[i]) || isNumber(words[i+1]) {
			continue
		}
		j, ok := qs.known(words[i] + words[i+1])
		if !ok {
			if j, ok = qs.known(words[i] + words[i+1] + "s"); !ok {
				continue
			}
		}
		if seen[j] || len(ix.postings[j]) == 0 {
			continue
		}
		seen[j] = true
		c := n
		if k, ok := index[qs.stem(words[i])]; ok {
			c = out[k].concept
		} else if k, ok := index[qs.stem(words[i+1])]; ok {
			c = out[k].concept
		} else {
			n++
		}
		out = append(out, queryTerm{j, weightJoined, c, false})
	}
	// Questions ask for a list ("which", "how many") or a state ("is",
	// "did").
	if len(words) > 0 {
		add := func(g string) {
			if !seen[g] && len(ix.postings[g]) > 0 {
				seen[g] = true
				out = append(out, queryTerm{g, weightQuestion, n, true})
				n++
			}
		}
		switch words[0] {
		case "which", "who", "what", "how":
			add(markEquivalent + "find")
		case "is", "are", "has", "have", "did", "does", "was", "were":
			add(markEquivalent + "status")
		}
	}
	for _, k := range kinds {
		c := n
		for _, t := range qs.terms(k) {
			if !seen[t] && len(ix.postings[t]) > 0 {
				seen[t] = true
				out = append(out, queryTerm{t, weightValue, c, true})
				n = c + 1
			}
		}
	}
	for i, t := range ts {
		for _, longer := range ix.extensions(t) {
			if !seen[longer] {
				seen[longer] = true
				out = append(out, queryTerm{longer, weightPrefix, concept[i], false})
			}
		}
	}
	return out
}

// isServer tells whether the words of name are those of a tool's server.
func (ix *Index) isServer(name string) bool {
	ts := ix.stems.terms(name)
	for _, t := range ts {
		if !slices.ContainsFunc(ix.postings[t], func(p posting) bool { return p.server }) {
			return false
		}
	}
	return len(ts) > 0
}

// Bounds of the abbreviations: a query's word of minPrefix letters or
// more that no tool has also matches, at weightPrefix, the maxExtensions shortest terms of
// the tools that begin with it and are at least minExtra letters longer
// ("ack" meets "acknowledg", "repo" "repositori", "config"
// "configur"), as people shorten words.
const (
	minPrefix     = 3
	minExtra      = 2
	maxExtensions = 8
	weightPrefix  = 0.5
)

// extensions are the indexed terms that t abbreviates.
func (ix *Index) extensions(t string) []string {
	if len(t) < minPrefix || strings.IndexFunc(t, unicode.IsDigit) >= 0 || len(ix.postings[t]) > 0 {
		return nil
	}
	i, _ := slices.BinarySearch(ix.vocab, t)
	var out []string
	for ; i < len(ix.vocab) && strings.HasPrefix(ix.vocab[i], t); i++ {
		if len(ix.vocab[i]) >= len(t)+minExtra {
			out = append(out, ix.vocab[i])
		}
	}
	if len(out) > maxExtensions {
		slices.SortStableFunc(out, func(a, b string) int { return len(a) - len(b) })
		out = out[:maxExtensions]
	}
	return out
}

func (ix *Index) searchRegex(ctx context.Context, pattern string, limit int) ([]Match, error) {
	if len(pattern) > MaxPatternBytes {
		return nil, fmt.Errorf("%w: the pattern has %d bytes, more than %d", ErrBadQuery, len(pattern), MaxPatternBytes)
	}
	re, err := regexp.Compile("(?i)" + pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadQuery, err)
	}
	var required []string
	if parsed, err := syntax.Parse("(?i)"+pattern, syntax.Perl); err == nil {
		required = literals(parsed.Simplify())
	}
	scores := map[int]float64{}
	fields := map[int][]string{}
	anyOf := func(list []string) bool {
		for _, x := range list {
			if re.MatchString(x) {
				return true
			}
		}
		return false
	}
	for i, d := range ix.docs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if required != nil && !containsAny(d.folded, required) {
			continue
		}
		s := 0.0
		var matched []string
		if re.MatchString(d.name) {
			s += 4
			matched = append(matched, FieldName)
		}
		if re.MatchString(d.desc) {
			s += 2
			matched = append(matched, FieldDescription)
		}
		if anyOf(d.names) {
			s++
			matched = append(matched, FieldArgumentName)
		}
		if anyOf(d.descs) {
			s++
			matched = append(matched, FieldArgumentDescription)
		}
		if d.server != "" && re.MatchString(d.server) {
			s++
			matched = append(matched, FieldServer)
		}
		if s > 0 {
			scores[i] = s
			fields[i] = matched
		}
	}
	return ix.best(scores, fields, limit), nil
}

// best returns the limit best-scored documents, ties in list order, each
// with its matched fields.
func (ix *Index) best(scores map[int]float64, fields map[int][]string, limit int) []Match {
	idx := make([]int, 0, len(scores))
	for i := range scores {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool {
		if scores[idx[a]] != scores[idx[b]] {
			return scores[idx[a]] > scores[idx[b]]
		}
		return idx[a] < idx[b]
	})
	if len(idx) > limit {
		idx = idx[:limit]
	}
	out := make([]Match, len(idx))
	for k, i := range idx {
		out[k] = Match{Tool: ix.tools[i], Score: scores[i], Fields: fields[i]}
	}
	return out
}

// schemaArgs collects the property names and descriptions of a schema,
// nested objects and array items included, to maxSchemaDepth; a
// property's string enum values count as a line of its description
// (document expansion: "refundable", "upcoming", "poweroff" say what the
// tool does as much as its description does).
func schemaArgs(schema map[string]any, depth int, names, descs *[]string) {
	if schema == nil || depth > maxSchemaDepth {
		return
	}
	props, _ := schema["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		*names = append(*names, k)
		p, ok := props[k].(map[string]any)
		if !ok {
			continue
		}
		if d, ok := p["description"].(string); ok && d != "" {
			*descs = append(*descs, d)
		}
		if e := enumWords(p); e != "" {
			*descs = append(*descs, e)
		}
		schemaArgs(p, depth+1, names, descs)
	}
	if items, ok := schema["items"].(map[string]any); ok {
		schemaArgs(items, depth+1, names, descs)
	}
}

// maxEnumWords bounds how many enum values of one property are indexed.
const maxEnumWords = 32

// enumWords is the string values of a property's enum (of its items'
// too), space-separated, the first maxEnumWords.
func enumWords(p map[string]any) string {
	e, ok := p["enum"].([]any)
	if !ok {
		if items, ok := p["items"].(map[string]any); ok {
			e, _ = items["enum"].([]any)
		}
	}
	var words []string
	for _, v := range e {
		if s, ok := v.(string); ok && s != "" && len(words) < maxEnumWords {
			words = append(words, s)
		}
	}
	return strings.Join(words, " ")
}

// stopwords are words too common in tool descriptions and needs to tell
// tools apart.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "to": true,
	"in": true, "on": true, "for": true, "with": true, "by": true, "at": true, "from": true,
	"is": true, "are": true, "be": true, "it": true, "its": true, "this": true, "that": true,
	"as": true, "into": true, "i": true, "me": true, "my": true, "we": true, "our": true,
	"you": true, "your": true, "can": true, "do": true, "does": true, "please": true,
	"want": true, "need": true, "some": true, "all": true, "any": true, "which": true,
	"what": true, "when": true, "if": true, "use": true, "tool": true, "so": true,
	"s": true, "t": true, "re": true, "ll": true, "m": true,
	// Question words, auxiliaries and pronouns: how people ask ("how
	// many ... did we", "is there a ...", "who has ..."), not what a
	// tool does.
	"how": true, "many": true, "much": true, "did": true, "has": true, "have": true,
	"had": true, "was": true, "were": true, "been": true, "there": true, "where": true,
	"who": true, "whom": true, "whose": true, "why": true, "would": true, "could": true,
	"should": true, "will": true, "shall": true, "might": true, "must": true, "these": true,
	"those": true, "them": true, "they": true, "their": true, "he": true, "she": true,
	"his": true, "her": true, "him": true, "us": true, "yet": true, "again": true,
	"also": true, "just": true, "still": true, "already": true, "ever": true, "very": true,
	"really": true, "actually": true, "anyone": true, "anybody": true, "someone": true,
	"something": true, "anything": true, "here": true, "then": true,
	"than": true, "about": true, "onto": true, "am": true, "let": true, "lets": true,
	"ok": true, "hey": true, "oops": true, "d": true, "ve": true,
	// "people" in a need is whoever ("what did people say", "do people
	// come back", "give people their money"), not a person record.
	"people": true,
}
