package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit"
)

// ErrContextBudget is wrapped by the error Run ends with when, after
// clearing old tool results and compacting (as far as the
// [ContextPolicy] allows), the history is still larger than
// [Options.ContextBudget]: the next request would exceed it. The history
// Run returns is paired and can be resumed with a larger budget or after
// the host shortened it.
var ErrContextBudget = errors.New("agentloop: the history exceeds the context budget")

// BytesPerToken is the ratio of the loop's size estimate: a message of n
// bytes (its text, its calls' names and arguments as JSON, its ids and
// provider state) counts n/BytesPerToken tokens, plus
// [MessageOverheadTokens].
//
// The error bound, against the tokenizers of OpenAI (o200k), Anthropic
// and Gemini: source code and JSON run at 3 to 4 bytes a token, so the
// estimate is within about -0% / +35% of the real count (an
// overestimate: safe); English prose runs at about 4 to 4.5 bytes a
// token, up to +50%; text that tokenizes badly (base64, hex dumps,
// non-Latin scripts at 1 to 2 bytes a token) is underestimated by up to
// 3×. Provider state (reasoning blocks, signatures) is counted as bytes
// too, although providers count earlier turns' reasoning at most once.
// That is why the loop replaces the estimate by the provider's own count
// ([Usage.ContextTokens], else [Usage.InputTokens]) as soon as an answer
// reports one, and estimates only what was added since; keep the
// thresholds below the model's real window by a margin that covers the
// estimate of one turn.
const BytesPerToken = 3

// ImageTokens is what the estimate counts for an image part, whatever its
// size: providers scale an image down to about a megapixel and bill it by
// its pixels (Anthropic: width×height/750, about 1,600 tokens at most), not
// by its bytes.
const ImageTokens = 1600

// MessageOverheadTokens is what each message counts in the estimate beside
// its bytes: the role and the framing every format adds.
const MessageOverheadTokens = 4

// Defaults of [ContextPolicy], as parts of [Options.ContextBudget].
const (
	// DefaultClearAtPercent: old tool results are cleared once the
	// history passes 60% of the budget.
	DefaultClearAtPercent = 60
	// DefaultCompactAtPercent: the history is compacted once it still
	// passes 85% of the budget after clearing.
	DefaultCompactAtPercent = 85
	// DefaultKeepRecentPercent: compaction keeps the latest messages
	// worth 25% of the budget as they are.
	DefaultKeepRecentPercent = 25
	// DefaultKeepToolResults is how many of the latest tool results are
	// never cleared.
	DefaultKeepToolResults = 4
	// DefaultSpillDir is where spilled results go, inside
	// [ContextPolicy.SpillRoot].
	DefaultSpillDir = ".llmtoolkit/spill"
)

// ContextPolicy says how [Run] keeps a long run inside
// [Options.ContextBudget]. Before each model call the loop counts the
// history (see [BytesPerToken]) and, in order:
//
//  1. past ClearAt, replaces the oldest tool results, beyond the latest
//     KeepToolResults, by a short stub naming the call and saying how to
//     get the result again, until the history is under three quarters of
//     ClearAt (the margin keeps clearing from happening on every turn,
//     which would defeat the providers' prompt caches). Assistant
//     messages are never edited: every call keeps its arguments, every
//     reasoning block its signature, every call its result message;
//  2. still past CompactAt, and with Summarize set, replaces the oldest
//     span of the history (after the leading system messages and the
//     first user message, before the latest messages worth KeepRecent
//     tokens, never splitting a call from its results) by a user message
//     holding Summarize's summary of it;
//  3. still past the budget, ends the run with an error wrapping
//     [ErrContextBudget].
//
// Independently of the budget, a tool result longer than SpillBytes is
// written whole to a file under SpillRoot, and the model gets its head,
// its tail and the file's path (see SpillBytes).
//
// The zero value does nothing: with ContextBudget 0 and SpillBytes 0 the
// loop behaves exactly as it did without a policy, at no cost. Each
// clearing, spill and compaction is reported as an [Event]
// ([EventContextCleared], [EventResultSpilled], [EventContextCompacted]),
// a log record at Debug (a spill or a compaction that fails: Warn) and,
// when the [Tracer] implements [ContextTracer], a span event with the
// tokens before and after.
type ContextPolicy struct {
	// ClearAt is the size, in tokens, past which old tool results are
	// cleared. 0 means [DefaultClearAtPercent] of the budget; negative:
	// never clear.
	ClearAt int
	// KeepToolResults is how many of the latest tool results are never
	// cleared. 0 means [DefaultKeepToolResults].
	KeepToolResults int
	// Summarize, when set, compacts the history: it receives the span to
	// summarize (never modify it) and returns the summary text. It runs
	// as a model step: through [Options.Executor] when one is set
	// ([ModelStep.Compaction] is then true, and Messages is the span
	// followed by a user message asking for a summary, so that an engine
	// running model steps elsewhere can have the model write it), so a
	// durable run replays the recorded summary instead of asking again.
	// A failure (an error or a panic) is logged and leaves the history as
	// it is. The summary is kept scrubbed of the run's declared secrets.
	// Nil: no compaction.
	Summarize func(ctx context.Context, span []Message) (string, error)
	// CompactAt is the size, in tokens, past which the history is
	// compacted (after clearing). 0 means [DefaultCompactAtPercent] of
	// the budget.
	CompactAt int
	// KeepRecent is how many tokens of the latest messages compaction
	// keeps as they are (at least the last turn, whatever its size). 0
	// means [DefaultKeepRecentPercent] of the budget.
	KeepRecent int
	// SpillBytes is the size past which a tool result is spilled: written
	// whole, scrubbed of the run's declared secrets (as the trace rows
	// are), to a file in SpillDir (inside SpillRoot) while the model gets
	// its first and last SpillBytes/2 bytes and a line with the file's
	// path, relative to SpillRoot, and the lines left out, so that
	// read_file (offset, limit) and grep page through it. The spill
	// happens inside the tool call's step, so a durable engine records
	// the short form. 0: no spilling.
	SpillBytes int
	// SpillRoot is the folder the model's file tools are confined to
	// (codetools' root): the paths the model is shown are relative to it.
	// Required with SpillBytes.
	SpillRoot string
	// SpillDir is the folder, relative to SpillRoot and inside it, that
	// holds the spill files: each run writes into its own subfolder
	// (named after the run's ID, [llmtoolkit.Scope].RunID, when it has one).
	// Files are opened through an [os.Root] on SpillRoot, so no link can
	// send them elsewhere. The folder gets a .gitignore that ignores it
	// all, which keeps the files out of git and out of codetools' walks
	// over the whole workspace (grep, glob, tree), while a path named
	// inside it is still read. Empty means [DefaultSpillDir].
	SpillDir string
	// KeepSpillFiles keeps the run's spill files when Run returns. By
	// default Run removes its subfolder when it returns, except with an
	// [Options.Executor] (a durable run's files must outlive a crashed
	// process; remove them with [ContextPolicy.RemoveSpillFiles] when the
	// run is over) and in [RunToolCall].
	KeepSpillFiles bool
}

// ContextChange describes one clearing, spill or compaction.
type ContextChange struct {
	// Kind is EventContextCleared, EventResultSpilled or
	// EventContextCompacted.
	Kind EventKind
	// Iteration is the 1-based iteration it happened in.
	Iteration int
	// TokensBefore and TokensAfter are the history's size (for a spill:
	// the result's) before and after, as the loop counts it.
	TokensBefore, TokensAfter int
	// Messages is how many tool results were cleared, or how many
	// messages were compacted into one; 1 for a spill.
	Messages int
	// Path is the spill file, relative to [ContextPolicy.SpillRoot].
	Path string
	// Call is the spilled result's call.
	Call llmtoolkit.Call
}

// ContextTracer is implemented by a [Tracer] that records clearings,
// spills and compactions (package otelkit's adds a span event to the
// run's span). ContextChanged is called from the goroutine that called
// Run, with the run's context, except for spills, which are reported from
// the tool call's goroutine with its context: concurrently when the
// calls of a turn run in parallel.
type ContextTracer interface {
	ContextChanged(ctx context.Context, c ContextChange)
}

// withPolicyDefaults checks the budget and the policy and fills in the
// defaults.
func (o Options) withPolicyDefaults() (Options, error) {
	p := &o.ContextPolicy
	switch {
	case o.ContextBudget < 0:
		return o, fmt.Errorf("%w: ContextBudget is %d; use a number of tokens, or 0 for no budget", ErrInvalidOptions, o.ContextBudget)
	case p.KeepToolResults < 0 || p.CompactAt < 0 || p.KeepRecent < 0 || p.SpillBytes < 0:
		return o, fmt.Errorf("%w: ContextPolicy has a negative KeepToolResults, CompactAt, KeepRecent or SpillBytes", ErrInvalidOptions)
	case p.Summarize != nil && o.ContextBudget == 0:
		return o, fmt.Errorf("%w: ContextPolicy.Summarize is set but ContextBudget is 0; set the budget compaction keeps the history under", ErrInvalidOptions)
	case p.SpillBytes > 0 && p.SpillRoot == "":
		return o, fmt.Errorf("%w: ContextPolicy.SpillBytes is set but SpillRoot is empty; set it to the folder the file tools are confined to", ErrInvalidOptions)
	case p.SpillBytes > 0 && p.SpillBytes < minSpillBytes:
		return o, fmt.Errorf("%w: ContextPolicy.SpillBytes is %d; use at least %d, so that the model sees a useful head and tail", ErrInvalidOptions, p.SpillBytes, minSpillBytes)
	}
	if p.SpillDir == "" {
		p.SpillDir = DefaultSpillDir
	}
	if !filepath.IsLocal(p.SpillDir) {
		return o, fmt.Errorf("%w: ContextPolicy.SpillDir %q must be a relative path inside SpillRoot", ErrInvalidOptions, p.SpillDir)
	}
	b := o.ContextBudget
	if b == 0 {
		return o, nil
	}
	if p.ClearAt == 0 {
		p.ClearAt = b * DefaultClearAtPercent / 100
	}
	if p.CompactAt == 0 {
		p.CompactAt = b * DefaultCompactAtPercent / 100
	}
	if p.KeepRecent == 0 {
		p.KeepRecent = b * DefaultKeepRecentPercent / 100
	}
	if p.KeepToolResults == 0 {
		p.KeepToolResults = DefaultKeepToolResults
	}
	return o, nil
}

// EstimateTokens returns the loop's estimate of the tokens messages take
// in a request: see [BytesPerToken] for the rule and its error.
func EstimateTokens(messages []Message) int {
	n := 0
	for i := range messages {
		n += estimateMessage(&messages[i])
	}
	return n
}

// EstimateToolTokens returns the loop's estimate of the tokens the
// definitions of tools take in a request.
func EstimateToolTokens(tools []llmtoolkit.Tool) int {
	n := 0
	for i := range tools {
		t := &tools[i]
		n += (len(t.Name)+len(t.Description)+jsonSize(t.Parameters, 0))/BytesPerToken + MessageOverheadTokens
	}
	return n
}

// estimateMessage is the estimate of one message. An assistant message
// that carries its answer's provider state is counted by that state,
// which holds the calls' arguments as the provider wrote them (it is what
// package provider's converters send back), so the arguments are not
// counted again.
func estimateMessage(m *Message) int {
	n := len(m.Content) + len(m.ToolCallID) + len(m.ToolName)
	state := len(m.Provider) > 0
	if state {
		n += stateSize(m.Provider)
	}
	for i := range m.ToolCalls {
		c := &m.ToolCalls[i]
		n += len(c.ID) + len(c.Name) + 16
		if len(c.Provider) > 0 {
			n += stateSize(c.Provider)
		}
		switch {
		case c.Malformed != nil:
			n += len(c.Malformed.Raw)
		case !state:
			n += jsonSize(c.Arguments, 0)
		}
	}
	images := 0
	for i := range m.Parts {
		if m.Parts[i].Kind == llmtoolkit.PartImage {
			images++
			continue
		}
		n += m.Parts[i].Size() // text and documents: their bytes, as text
	}
	return n/BytesPerToken + MessageOverheadTokens + images*ImageTokens
}

// stateKeys are the keys of [llmtoolkit.ProviderState] package provider
// writes (provider.StateAnthropic, StateGemini, StateOpenAIResponses; a
// test checks they match).
func stateKeys() [3]string { return [...]string{"anthropic", "gemini", "openai-responses"} }

// stateSize is the bytes of s: its keys and values. It looks up the
// [stateKeys] before ranging over the map: a lookup of a short key costs
// less than a range over a small map (which draws a random start and
// walks every slot), and a map holding only those keys, as every answer
// package provider parses does, is measured by lookups alone. Any other
// key is counted by the range, so the result is the same for every map.
func stateSize(s llmtoolkit.ProviderState) int {
	n, found := 0, 0
	for _, k := range stateKeys() {
		if v, ok := s[k]; ok {
			n += len(k) + len(v)
			if found++; found == len(s) {
				return n
			}
		}
	}
	n = 0
	for k, v := range s {
		n += len(k) + len(v)
	}
	return n
}

// jsonSize approximates the length of v encoded as JSON without encoding
// it (escapes are not counted); a type JSON decoding does not produce is
// encoded to be measured.
func jsonSize(v any, depth int) int {
	if depth > 64 {
		return 0
	}
	switch x := v.(type) {
	case nil:
		return 4
	case string:
		return len(x) + 2
	case bool:
		return 5
	case float64, int, int64, json.Number:
		return 8
	case map[string]any:
		n := 2
		for k, e := range x {
			n += len(k) + 4 + jsonSize(e, depth+1)
		}
		return n
	case []any:
		n := 2
		for _, e := range x {
			n += 1 + jsonSize(e, depth+1)
		}
		return n
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// accounting is the loop's count of its history's size: the provider's
// count of the last request that reported one, plus the estimate of what
// changed since (messages added, results cleared, spans compacted). Each
// turn costs the estimate of the messages it added, whatever the
// history's length.
type accounting struct {
	est         int // estimate of history[:counted]
	counted     int
	reported    int // provider's count of the last request that reported one; 0: none
	estAtReport int // est of the history that request sent
	estAtSend   int // est of the history of the request in flight
	tools       int // estimate of the tools last offered
	toolsKey    *llmtoolkit.Tool
	toolsLen    int
}

// tokens returns the size of history as a request would send it with the
// tools last offered.
func (a *accounting) tokens(history []Message) int {
	if n := len(history); a.counted < n {
		est := a.est
		for i := a.counted; i < n; i++ {
			est += estimateMessage(&history[i])
		}
		a.est, a.counted = est, n
	}
	if a.reported > 0 {
		return max(a.reported+a.est-a.estAtReport, 0)
	}
	return a.est + a.tools
}

// offer notes the tools of the next request.
func (a *accounting) offer(tools []llmtoolkit.Tool) {
	var key *llmtoolkit.Tool
	if len(tools) > 0 {
		key = &tools[0]
	}
	if key != a.toolsKey || len(tools) != a.toolsLen {
		a.toolsKey, a.toolsLen, a.tools = key, len(tools), EstimateToolTokens(tools)
	}
}

// sent notes that history (counted by tokens) is being sent.
func (a *accounting) sent() { a.estAtSend = a.est }

// observe takes the provider's count from the answer, if it has one.
func (a *accounting) observe(u Usage) {
	n := u.ContextTokens
	if n <= 0 {
		n = u.InputTokens
	}
	if n > 0 {
		a.reported, a.estAtReport = n, a.estAtSend
	}
}

// replaced notes that a counted message changed from old to new.
func (a *accounting) replaced(old, new *Message) {
	a.est += estimateMessage(new) - estimateMessage(old)
}

// recount counts history again from the start, after a compaction that
// removed a span whose estimate was removed; the provider's count stays
// the base, corrected by the change of the estimate.
func (a *accounting) recount(history []Message) {
	a.est, a.counted = 0, 0
	a.tokens(history)
}

// report sends c to the event callback, the log and the tracer.
func (l *loop) report(ctx context.Context, c ContextChange) {
	l.emit(Event{Kind: c.Kind, Iteration: c.Iteration, Call: c.Call, Context: &c})
	level := slog.LevelDebug // quiet by default, as the run's own record
	attrs := []slog.Attr{
		slog.String("change", string(c.Kind)), slog.Int("iteration", c.Iteration),
		slog.Int("tokens_before", c.TokensBefore), slog.Int("tokens_after", c.TokensAfter),
		slog.Int("messages", c.Messages),
	}
	if c.Path != "" {
		attrs = append(attrs, slog.String("path", c.Path), slog.String("tool", c.Call.Name))
	}
	l.opts.Logger.LogAttrs(ctx, level, "agentloop: context "+string(c.Kind), attrs...)
	if ct, ok := l.opts.Tracer.(ContextTracer); ok {
		ct.ContextChanged(ctx, c)
	}
}
