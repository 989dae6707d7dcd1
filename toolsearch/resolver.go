package toolsearch

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// The names of the tools a [Resolver] adds.
const (
	// SearchToolName is the search tool's name.
	SearchToolName = "tool_search"
	// CallToolName is the proxy mode's tool that runs a found tool.
	CallToolName = "call_tool"
)

// Defaults of the options.
const (
	// DefaultMaxResults is how many tools one search answers by default.
	DefaultMaxResults = 5
	// maxResults bounds what a model may ask for with "limit".
	maxResults = 20
	// maxAnswerBytes bounds one search's answer.
	maxAnswerBytes = 64 << 10
)

// Resolver offers a resolver's deferred tools ([llmtoolkit.Tool.Deferred])
// through a tool search. Build it with [New], one per conversation: what
// the model has found is that conversation's.
//
// It lists the wrapped resolver's tools that are not deferred, then
// tool_search, then (proxy mode) call_tool, then (offer mode) the deferred
// tools the model has found, in the order it found them: what the model
// was offered before is never moved, so a provider's cached prefix of the
// request stays valid. agentloop reads the list again before every model
// call (leave Options.Tools nil), so a tool found in one turn is offered
// from the next.
//
// A call of a deferred tool the model has not found is answered with an
// error wrapping [llmtoolkit.ErrUnknownTool] ([WithUndiscoveredCalls]
// lets them through). Every other call goes to the wrapped resolver as it
// is.
//
// Per-tool facts cross it unchanged: each definition it lists is the
// wrapped resolver's own. call_tool is a recipe ([llmtoolkit.Tool.Recipe])
// whose one step is the call it makes, so [llmtoolkit.Execute] runs that
// step through the same stack as any call: a permission guard or a
// trace.Recorder wrapped around the Resolver, or inside it, checks and
// records the real tool's name and arguments. call_tool declares, as its
// own sensitive fields, those of every deferred tool (under "arguments"),
// so that a recorder around it redacts the proxied arguments too.
type Resolver struct {
	r   llmtoolkit.Resolver
	cfg config

	mu    sync.Mutex
	found []string // names found, in order
	isNew map[string]bool
	ix    *Index
	ixKey uint64
	// vectors keeps the deferred tools' vectors across rebuilds of ix.
	vectors *VectorCache
}

// Exposure is how the tools a search finds are given to the model.
type Exposure int

// The exposures.
const (
	// Offer adds the tools found to the listed tools, from the next turn.
	Offer Exposure = iota
	// Proxy lists two fixed tools: tool_search answers the found tools'
	// schemas, call_tool runs one of them by name. The listed tools never
	// change, so the provider's prompt cache is never invalidated.
	Proxy
)

type config struct {
	// equivalents are the host's groups of equivalent words, behind a
	// pointer so that config stays comparable.
	equivalents  *[][]string
	related      *[][]string
	mode         Mode
	embedder     Embedder
	exposure     Exposure
	maxResults   int
	undiscovered bool
}

// Option configures [New].
type Option func(*config)

// WithMode sets how queries match: [BM25] (the default), [Regex] or
// [Hybrid] (with [WithEmbedder]).
func WithMode(m Mode) Option { return func(c *config) { c.mode = m } }

// WithEmbedder gives the search the host's [Embedder] and selects the
// [Hybrid] mode: each deferred tool is embedded once (its vector kept by a
// hash of its definition while the Resolver lives, however the list
// changes), each query once per search. A search whose embedder fails
// answers the error (wrapping [ErrEmbedding]), so that the model can
// search again; WithMode(BM25) after it keeps the lexical search.
func WithEmbedder(e Embedder) Option {
	return func(c *config) {
		c.embedder = e
		if e != nil {
			c.mode = Hybrid
		}
	}
}

// WithEquivalentWords adds groups of equivalent words to
// [DefaultEquivalents] for the BM25 search (see [WithEquivalents]).
func WithEquivalentWords(groups ...[]string) Option {
	return func(c *config) {
		var all [][]string
		if c.equivalents != nil {
			all = *c.equivalents
		}
		all = append(slices.Clone(all), groups...)
		c.equivalents = &all
	}
}

// WithRelatedWords adds groups of related words to [DefaultRelated] for
// the BM25 search (see [WithRelated]).
func WithRelatedWords(groups ...[]string) Option {
	return func(c *config) {
		var all [][]string
		if c.related != nil {
			all = *c.related
		}
		all = append(slices.Clone(all), groups...)
		c.related = &all
	}
}

// WithProxy selects the proxy exposure ([Proxy]): tool_search answers
// schemas, call_tool runs a found tool, the listed tools never change.
func WithProxy() Option { return func(c *config) { c.exposure = Proxy } }

// WithMaxResults sets how many tools one search answers when the model
// does not ask for a number (default [DefaultMaxResults]; at most 20).
func WithMaxResults(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxResults = min(n, maxResults)
		}
	}
}

// WithUndiscoveredCalls lets calls of deferred tools the model has not
// found through (for hosts whose models know their tools by name): they
// go to the wrapped resolver as any call.
func WithUndiscoveredCalls() Option { return func(c *config) { c.undiscovered = true } }

// New returns a Resolver offering r's deferred tools through a search.
func New(r llmtoolkit.Resolver, opts ...Option) *Resolver {
	cfg := config{mode: BM25, maxResults: DefaultMaxResults}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.mode != Regex && (cfg.mode != Hybrid || cfg.embedder == nil) {
		cfg.mode = BM25
	}
	s := &Resolver{r: r, cfg: cfg, isNew: map[string]bool{}}
	if cfg.embedder != nil {
		s.vectors = NewVectorCache(0)
	}
	return s
}

// Found returns the names of the deferred tools the model has found, in
// the order it found them.
func (s *Resolver) Found() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.found)
}

// Load marks tools as found, as if a search had answered them: to restore
// a conversation's state, or to follow a provider's own tool search (the
// names provider.AnthropicToolReferences reads). Names that are not
// deferred tools of the wrapped resolver are ignored.
func (s *Resolver) Load(names ...string) {
	_, deferred := s.split()
	byName := make(map[string]bool, len(deferred))
	for _, t := range deferred {
		byName[t.Name] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		if byName[n] {
			s.markLocked(n)
		}
	}
}

func (s *Resolver) markLocked(name string) {
	if !s.isNew[name] {
		s.isNew[name] = true
		s.found = append(s.found, name)
	}
}

func (s *Resolver) isFound(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isNew[name]
}

// split reads the wrapped resolver's list: the tools offered at once and
// the deferred ones. Tools named as the Resolver's own are left out.
func (s *Resolver) split() (offered, deferred []llmtoolkit.Tool) {
	if s.r == nil {
		return nil, nil
	}
	list := s.r.Tools()
	n := 0
	for i := range list {
		if list[i].Deferred {
			n++
		}
	}
	offered, deferred = make([]llmtoolkit.Tool, 0, len(list)-n+2), make([]llmtoolkit.Tool, 0, n)
	for _, t := range list {
		if t.Name == SearchToolName || (s.cfg.exposure == Proxy && t.Name == CallToolName) {
			continue
		}
		if t.Deferred {
			deferred = append(deferred, t)
		} else {
			offered = append(offered, t)
		}
	}
	return offered, deferred
}

// Tools lists the tools not deferred, tool_search (and call_tool), then,
// in offer mode, the tools found in the order they were found.
func (s *Resolver) Tools() []llmtoolkit.Tool {
	offered, deferred := s.split()
	out := append(offered, s.searchTool())
	if s.cfg.exposure == Proxy {
		return append(out, s.callTool(deferred))
	}
	byName := make(map[string]int, len(deferred))
	for i, t := range deferred {
		if _, dup := byName[t.Name]; !dup {
			byName[t.Name] = i
		}
	}
	for _, name := range s.Found() {
		if i, ok := byName[name]; ok {
			out = append(out, deferred[i])
		}
	}
	return out
}

// LookupTool finds name: the Resolver's own tools, the wrapped resolver's
// tools that are not deferred, and the deferred ones the model has found
// (all of them with [WithUndiscoveredCalls]). In proxy mode a found tool
// is found here though not listed: call_tool's step is validated against
// its definition and carries its facts.
func (s *Resolver) LookupTool(name string) (llmtoolkit.Tool, bool) {
	switch {
	case name == SearchToolName:
		return s.searchTool(), true
	case name == CallToolName && s.cfg.exposure == Proxy:
		_, deferred := s.split()
		return s.callTool(deferred), true
	}
	t, ok := llmtoolkit.FindTool(s.r, name)
	if !ok || !t.Deferred || s.cfg.undiscovered || s.isFound(name) {
		return t, ok
	}
	return llmtoolkit.Tool{}, false
}

// ErrUndiscovered is wrapped, with [llmtoolkit.ErrUnknownTool], by the
// error of a call of a deferred tool the model has not found.
var ErrUndiscovered = errors.New("the tool has not been found with " + SearchToolName)

// Resolve answers tool_search, runs call_tool's call (when it reaches
// Resolve, outside [llmtoolkit.Execute]) and refuses undiscovered
// deferred tools; every other call goes to the wrapped resolver.
func (s *Resolver) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	switch {
	case call.Name == SearchToolName:
		return s.search(ctx, call.Arguments)
	case call.Name == CallToolName && s.cfg.exposure == Proxy:
		step, err := proxied(call.Arguments)
		if err != nil {
			return "", err
		}
		res := llmtoolkit.Execute(ctx, s, step)
		if res.IsError {
			return "", fmt.Errorf("%s: %w", res.Content, res.Err)
		}
		return res.Content, nil
	}
	if s.r == nil {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	if !s.cfg.undiscovered && !s.isFound(call.Name) {
		if t, ok := llmtoolkit.FindTool(s.r, call.Name); ok && t.Deferred {
			return "", &undiscoveredError{name: call.Name}
		}
	}
	return s.r.Resolve(ctx, call)
}

// undiscoveredError is the error of a call of a deferred tool not found.
type undiscoveredError struct{ name string }

func (e *undiscoveredError) Error() string {
	return fmt.Sprintf("unknown tool: %s (search for the tool you need with %s first)", e.name, SearchToolName)
}

// Is reports ErrUnknownTool and ErrUndiscovered.
func (e *undiscoveredError) Is(target error) bool {
	return target == llmtoolkit.ErrUnknownTool || target == ErrUndiscovered
}

// index returns the index over the deferred tools, built again when
// their list changed.
func (s *Resolver) index(deferred []llmtoolkit.Tool) *Index {
	key := fingerprint(deferred)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ix == nil || s.ixKey != key {
		s.ix, s.ixKey = NewIndexWith(deferred, s.indexOptions()...), key
	}
	return s.ix
}

// indexOptions are the options of the index over the deferred tools.
func (s *Resolver) indexOptions() []IndexOption {
	var opts []IndexOption
	if s.cfg.equivalents != nil {
		opts = append(opts, WithEquivalents(*s.cfg.equivalents...))
	}
	if s.cfg.related != nil {
		opts = append(opts, WithRelated(*s.cfg.related...))
	}
	if s.cfg.embedder != nil {
		opts = append(opts, WithEmbeddings(s.cfg.embedder, s.vectors))
	}
	return opts
}

// fingerprintSeed seeds every fingerprint, so that they compare across
// calls.
var fingerprintSeed = maphash.MakeSeed()

// fingerprint tells one list of definitions from another: names,
// descriptions, servers and schema identities.
func fingerprint(tools []llmtoolkit.Tool) uint64 {
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	var ptr [8]byte
	for _, t := range tools {
		h.WriteString(t.Name)
		h.WriteByte(0)
		h.WriteString(t.Description)
		h.WriteByte(0)
		h.WriteString(serverOf(t))
		h.WriteByte(0)
		binary.LittleEndian.PutUint64(ptr[:], uint64(reflect.ValueOf(t.Parameters).Pointer()))
		h.Write(ptr[:])
	}
	return h.Sum64()
}

// searchArgs are tool_search's arguments.
type searchArgs struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// search runs one tool_search call and marks what it found.
func (s *Resolver) search(ctx context.Context, raw map[string]any) (string, error) {
	var args searchArgs
	if err := remarshal(raw, &args); err != nil {
		return "", fmt.Errorf("%w: %w", llmtoolkit.ErrInvalidArguments, err)
	}
	limit := s.cfg.maxResults
	if args.Limit > 0 {
		limit = min(args.Limit, maxResults)
	}
	_, deferred := s.split()
	matches, err := s.index(deferred).Search(ctx, args.Query, s.cfg.mode, limit)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	for _, m := range matches {
		s.markLocked(m.Tool.Name)
	}
	s.mu.Unlock()
	return s.answer(args.Query, matches, len(deferred))
}

// answer is what the model reads of a search.
func (s *Resolver) answer(query string, matches []Match, total int) (string, error) {
	if len(matches) == 0 {
		hint := "try other words"
		if s.cfg.mode == Regex {
			hint = "try a broader pattern, such as alternatives (a|b) or a shorter word"
		}
		return fmt.Sprintf("No tool matches %q among %d; %s.", query, total, hint), nil
	}
	var b strings.Builder
	if s.cfg.exposure == Proxy {
		fmt.Fprintf(&b, "%d tools found. Run one with %s {\"name\": NAME, \"arguments\": {...}}, the arguments as its parameters say:\n", len(matches), CallToolName)
		type def struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
			Matched     []string       `json:"matched_in,omitempty"`
		}
		for _, m := range matches {
			line, err := json.Marshal(def{m.Tool.Name, m.Tool.Description, m.Tool.Parameters, m.Fields})
			if err != nil {
				return "", fmt.Errorf("tool %q: %w", m.Tool.Name, err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	} else {
		fmt.Fprintf(&b, "%d tools found; you can call them from now on:\n", len(matches))
		for _, m := range matches {
			fmt.Fprintf(&b, "- %s: %s", m.Tool.Name, firstLine(m.Tool.Description))
			if len(m.Fields) > 0 {
				fmt.Fprintf(&b, " (matched in: %s)", strings.Join(m.Fields, ", "))
			}
			b.WriteByte('\n')
		}
	}
	out := b.String()
	if len(out) > maxAnswerBytes {
		out = textutil.CutUTF8(out, maxAnswerBytes) + "\n[answer cut: ask for fewer tools with \"limit\"]"
	}
	return out, nil
}

// firstLine is a description's first line, at most 300 bytes.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = textutil.CutUTF8(s, 300) + "…"
	}
	return s
}

// searchTool is tool_search's definition.
func (s *Resolver) searchTool() llmtoolkit.Tool {
	if s.cfg.mode == Regex {
		return searchTools[Regex]
	}
	return searchTools[BM25]
}

var searchTools = map[Mode]llmtoolkit.Tool{
	BM25: llmtoolkit.MustTool(SearchToolName,
		"Searches the tools that are not listed yet, by what they do. Arguments: \"query\" (required), the capability you need in a few words, and \"limit\" (optional, default 5, at most 20). Example: {\"query\": \"create an issue in Linear\", \"limit\": 5}. The best matches are answered and can be used from then on (with call_tool when it is listed). Search again with other words if none fits.",
		searchParams("Words describing the tool you need: what it does, on what system.")),
	Regex: llmtoolkit.MustTool(SearchToolName,
		"Searches the tools that are not listed yet with a regular expression (RE2 syntax, case-insensitive) matched against each of their fields on its own: the name, the description, each argument name, each argument description, the name of its server (^ and $ anchor in each field). Arguments: \"query\" (required), the pattern, and \"limit\" (optional, default 5, at most 20). Example: {\"query\": \"^slack_(post|send)\", \"limit\": 5}; other patterns: \"(create|open).*issue\", \"postgres|sql\", \"_merge_request$\". The answer names the fields each tool matched in; the tools found can be used from then on (with call_tool when it is listed).",
		searchParams("A regular expression (RE2, at most 200 bytes), matched without regard to case.")),
}

func searchParams(query string) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": query, "minLength": 1},
			"limit": map[string]any{"type": "integer", "description": "How many tools to answer at most (default 5, at most 20).", "minimum": 1, "maximum": maxResults},
		},
		"required":             []any{"query"},
		"additionalProperties": false,
	}
}

// callToolParams is call_tool's schema.
var callToolParams = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":      map[string]any{"type": "string", "minLength": 1, "description": "The name of a tool " + SearchToolName + " answered."},
		"arguments": map[string]any{"type": "object", "description": "The tool's arguments, as its parameters say."},
	},
	"required":             []any{"name", "arguments"},
	"additionalProperties": false,
}

var callToolBase = llmtoolkit.MustTool(CallToolName,
	"Runs a tool that "+SearchToolName+" found, by its name, with its arguments. Arguments: \"name\" (required), the tool's name as "+SearchToolName+" answered it, and \"arguments\" (required), an object holding that tool's arguments as its parameters say. Example: {\"name\": \"slack_post_message\", \"arguments\": {\"channel\": \"#deploys\", \"text\": \"v2 is out\"}}.", callToolParams)

// callTool is call_tool's definition: a recipe of the one call it makes,
// declaring the deferred tools' sensitive fields under "arguments".
func (s *Resolver) callTool(deferred []llmtoolkit.Tool) llmtoolkit.Tool {
	t := callToolBase
	t.Recipe = proxyRecipe
	var fields []string
	for _, d := range deferred {
		for _, f := range d.SensitiveFields {
			if strings.Contains(f, ".") {
				f = "arguments." + f
			}
			fields = append(fields, f)
		}
	}
	if len(fields) > 0 {
		slices.Sort(fields)
		t.SensitiveFields = slices.Compact(fields)
	}
	return t
}

// proxyRecipe is call_tool's plan: the call it makes, run through the
// stack like any call.
func proxyRecipe(args map[string]any) llmtoolkit.Plan {
	step, err := proxied(args)
	if err != nil {
		return llmtoolkit.Plan{Compose: func([]llmtoolkit.Result) (string, error) { return "", err }}
	}
	return llmtoolkit.Plan{Serial: []llmtoolkit.Call{step}}
}

// proxied is the call call_tool's arguments name.
func proxied(args map[string]any) (llmtoolkit.Call, error) {
	name, _ := args["name"].(string)
	if name == "" || name == CallToolName {
		return llmtoolkit.Call{}, fmt.Errorf("%w for tool %q: \"name\" must name a tool %s found", llmtoolkit.ErrInvalidArguments, CallToolName, SearchToolName)
	}
	inner, _ := args["arguments"].(map[string]any)
	if inner == nil {
		inner = map[string]any{}
	}
	return llmtoolkit.Call{Name: name, Arguments: inner}, nil
}

// remarshal decodes a JSON-like map into v.
func remarshal(m map[string]any, v any) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
