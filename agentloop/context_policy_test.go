package agentloop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// turnsModel is a stateless model: it reads the turn from the last tool
// result's call id ("c<K>") and asks, in turns 1 to last-1, for the call
// call(K) (with id "c<K>" and a signed answer), then answers "done". A
// replayed run asks it exactly what an uninterrupted one did.
func turnsModel(last int, call func(k int) llmtoolkit.Call) agentloop.SendFunc {
	return func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
		k := 1
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == agentloop.RoleTool {
				n, err := strconv.Atoi(strings.TrimPrefix(msgs[i].ToolCallID, "c"))
				if err != nil {
					return agentloop.Response{}, err
				}
				k = n + 1
				break
			}
		}
		if k >= last {
			return agentloop.Response{Content: "done", StopReason: "end_turn"}, nil
		}
		c := call(k)
		c.ID = "c" + strconv.Itoa(k)
		return signedTurn(k, []llmtoolkit.Call{c})
	}
}

// bigTool answers each call with size bytes naming the call's arguments.
func bigTool(size int) *lt.Fake {
	f := &lt.Fake{}
	f.Handle("read", func(_ context.Context, c llmtoolkit.Call) (string, error) {
		head := fmt.Sprintf("contents of %v\n", c.Arguments["path"])
		return head + strings.Repeat("x", size-len(head)), nil
	})
	return f
}

func readCall(k int) llmtoolkit.Call {
	return lt.Call("read", map[string]any{"path": fmt.Sprintf("f%d.go", k)})
}

func TestContextPolicyOptions(t *testing.T) {
	sum := func(context.Context, []agentloop.Message) (string, error) { return "", nil }
	tests := map[string]agentloop.Options{
		"negative budget":          {ContextBudget: -1},
		"summarize without budget": {ContextPolicy: agentloop.ContextPolicy{Summarize: sum}},
		"spill without root":       {ContextPolicy: agentloop.ContextPolicy{SpillBytes: 4096}},
		"spill too small":          {ContextPolicy: agentloop.ContextPolicy{SpillBytes: 10, SpillRoot: t.TempDir()}},
		"spill dir outside":        {ContextPolicy: agentloop.ContextPolicy{SpillBytes: 4096, SpillRoot: t.TempDir(), SpillDir: "../out"}},
		"spill dir absolute":       {ContextPolicy: agentloop.ContextPolicy{SpillBytes: 4096, SpillRoot: t.TempDir(), SpillDir: "/tmp"}},
		"negative keep":            {ContextBudget: 1000, ContextPolicy: agentloop.ContextPolicy{KeepToolResults: -1}},
	}
	for name, opts := range tests {
		t.Run(name, func(t *testing.T) {
			opts.Logger = quiet
			_, _, err := agentloop.Run(t.Context(), prompt(), lt.NewScriptedModel(t).Send, opts)
			require.ErrorIs(t, err, agentloop.ErrInvalidOptions)
		})
	}
}

// TestClearingKeepsPairsArgumentsAndSignatures: past ClearAt the oldest
// results become stubs naming their call; the latest KeepToolResults,
// every assistant message (calls, arguments, reasoning state) and every
// call/result pairing stay as they were, and every format accepts the
// history.
func TestClearingKeepsPairsArgumentsAndSignatures(t *testing.T) {
	const turns = 12
	budget := agentloop.Options{ContextBudget: 20000, ContextPolicy: agentloop.ContextPolicy{KeepToolResults: 3}}
	run := func(opts agentloop.Options) ([]agentloop.Message, []agentloop.Event) {
		var events []agentloop.Event
		opts.Resolver, opts.Logger, opts.MaxIterations = bigTool(3000), quiet, turns
		opts.OnEvent = func(e agentloop.Event) {
			if e.Context != nil {
				events = append(events, e)
			}
		}
		_, history, err := agentloop.Run(t.Context(), prompt(), turnsModel(turns, readCall), opts)
		require.NoError(t, err)
		return history, events
	}
	plain, none := run(agentloop.Options{})
	assert.Empty(t, none, "no budget: nothing cleared")
	history, events := run(budget)
	require.Len(t, history, len(plain))
	require.NotEmpty(t, events)
	assert.Equal(t, agentloop.EventContextCleared, events[0].Kind)
	assert.Greater(t, events[0].Context.TokensBefore, events[0].Context.TokensAfter)

	var results []int
	for i, m := range history {
		if m.Role != agentloop.RoleTool {
			assert.Equal(t, plain[i], m, "message %d (%s) is unchanged", i, m.Role)
			continue
		}
		results = append(results, i)
		assert.Equal(t, plain[i].ToolCallID, m.ToolCallID)
		assert.Equal(t, plain[i].ToolName, m.ToolName)
	}
	cleared := 0
	for n, i := range results {
		m := history[i]
		if n >= len(results)-3 {
			assert.Equal(t, plain[i], m, "the latest results are kept")
			continue
		}
		if strings.HasPrefix(m.Content, agentloop.ClearedPrefix) {
			cleared++
			k := n + 1
			assert.Equal(t, fmt.Sprintf(`%sread {"path":"f%d.go"} returned 3000 bytes; call it again if you need it`, agentloop.ClearedPrefix, k), m.Content)
		}
	}
	assert.Positive(t, cleared)
	require.NoError(t, validateFormats(history))
	// The checks can fail: a history whose pairing was broken is refused.
	broken := append([]agentloop.Message{}, history[:len(history)-3]...)
	broken = append(broken, history[len(history)-2:]...)
	assert.Error(t, validateFormats(broken))
}

// TestClearingRedactsSensitiveArguments: a stub repeats its call's
// arguments without the values of the fields the tool declares sensitive.
func TestClearingRedactsSensitiveArguments(t *testing.T) {
	f := &lt.Fake{}
	tool := llmtoolkit.MustTool("fetch", "Fetch.", map[string]any{"type": "object", "properties": map[string]any{
		"url": map[string]any{"type": "string"}, "token": map[string]any{"type": "string"}}})
	tool.SensitiveFields = []string{"token"}
	f.Add(tool, func(context.Context, llmtoolkit.Call) (string, error) { return strings.Repeat("y", 3000), nil })
	call := func(k int) llmtoolkit.Call {
		return lt.Call("fetch", map[string]any{"url": fmt.Sprintf("https://example.com/%d", k), "token": "hunter2-secret"})
	}
	_, history, err := agentloop.Run(t.Context(), prompt(), turnsModel(10, call), agentloop.Options{
		Resolver: f, Logger: quiet, ContextBudget: 20000, ContextPolicy: agentloop.ContextPolicy{KeepToolResults: 1}})
	require.NoError(t, err)
	stubs := 0
	for _, m := range history {
		if strings.HasPrefix(m.Content, agentloop.ClearedPrefix) {
			stubs++
			assert.NotContains(t, m.Content, "hunter2")
			assert.Contains(t, m.Content, agentloop.Redacted)
			assert.Contains(t, m.Content, "https://example.com/")
		}
	}
	assert.Positive(t, stubs)
}

// TestContextBudgetExceeded: when the kept results alone pass the budget,
// Run ends with ErrContextBudget before sending, with a paired history.
func TestContextBudgetExceeded(t *testing.T) {
	_, history, err := agentloop.Run(t.Context(), prompt(), turnsModel(10, readCall), agentloop.Options{
		Resolver: bigTool(30000), Logger: quiet, ContextBudget: 15000})
	require.ErrorIs(t, err, agentloop.ErrContextBudget)
	require.NoError(t, validateFormats(history))
}

// TestAccountingUsesTheProvidersCount: once an answer reports the
// prompt's size, the loop counts from it, adding its estimate of what
// came since; the estimate alone before.
func TestAccountingUsesTheProvidersCount(t *testing.T) {
	var counts []int
	var sent [][]agentloop.Message
	send := func(ctx context.Context, msgs []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
		sent = append(sent, msgs)
		if len(sent) == 3 {
			return agentloop.Response{Content: "done"}, nil
		}
		c := readCall(len(sent))
		c.ID = fmt.Sprintf("c%d", len(sent))
		// A cached prompt: 50,000 tokens, of which 49,000 were read from the cache.
		return agentloop.Response{ToolCalls: []llmtoolkit.Call{c}, Usage: agentloop.Usage{InputTokens: 1000, ContextTokens: 50000}}, nil
	}
	fake := bigTool(3000)
	_, _, err := agentloop.Run(t.Context(), prompt(), send, agentloop.Options{Resolver: fake, Logger: quiet, ContextBudget: 1_000_000,
		OnIteration: func(it agentloop.Iteration) { counts = append(counts, it.ContextTokens) }})
	require.NoError(t, err)
	require.Len(t, counts, 3)
	assert.Equal(t, agentloop.EstimateTokens(sent[0])+agentloop.EstimateToolTokens(fake.Tools()), counts[0], "no count yet: the estimate")
	added := agentloop.EstimateTokens(sent[1][len(sent[0]):])
	assert.Equal(t, 50000+added, counts[1], "the provider's count (cache included) plus the estimate of the turn added")
	assert.Equal(t, 50000+agentloop.EstimateTokens(sent[2][len(sent[1]):]), counts[2])
}

// TestSpillToAFileTheCodeToolsRead: a result past SpillBytes is written
// whole to a file in the workspace's spill folder; the model gets its head,
// its tail and the path, and pages through the file with read_file and
// grep; the file is gone when Run returns.
func TestSpillToAFileTheCodeToolsRead(t *testing.T) {
	root := t.TempDir()
	ct, err := codetools.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { ct.Close() })
	var big strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&big, "log line %d\n", i)
	}
	logs := &lt.Fake{}
	logs.Returns("build_log", big.String())
	var spilled string
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("build_log", nil)),
		lt.Respond(func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			last := msgs[len(msgs)-1].Content
			assert.Less(t, len(last), 4096+512, "the model gets a head and a tail")
			assert.True(t, strings.HasPrefix(last, "log line 1\n"))
			assert.True(t, strings.HasSuffix(last, "log line 5000\n"))
			i := strings.Index(last, agentloop.DefaultSpillDir)
			require.GreaterOrEqual(t, i, 0, last)
			spilled = last[i : i+strings.IndexByte(last[i:], '"')]
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{
				{ID: "r", Name: "read_file", Arguments: map[string]any{"path": spilled, "offset": 2500.0, "limit": 2.0}},
				{ID: "g", Name: "grep", Arguments: map[string]any{"pattern": "line 4321$", "path": spilled}},
				{ID: "w", Name: "grep", Arguments: map[string]any{"pattern": "line 4321$"}},
			}}, nil
		}),
		lt.Respond(func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			n := len(msgs)
			assert.Contains(t, msgs[n-3].Content, "log line 2500\nlog line 2501")
			assert.Contains(t, msgs[n-2].Content, "log line 4321")
			assert.NotContains(t, msgs[n-1].Content, "log line 4321", "a grep over the workspace leaves the spill files out (their folder's .gitignore)")
			_, err := os.Stat(filepath.Join(root, spilled))
			assert.NoError(t, err, "the file is there during the run")
			return agentloop.Response{Content: "done"}, nil
		}),
	)
	var events []agentloop.Event
	_, _, err = agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{
		Resolver: llmtoolkit.Compose(ct, logs), Logger: quiet,
		ContextPolicy: agentloop.ContextPolicy{SpillBytes: 4096, SpillRoot: root},
		OnEvent: func(e agentloop.Event) {
			if e.Kind == agentloop.EventResultSpilled {
				events = append(events, e)
			}
		},
	})
	require.NoError(t, err)
	require.Len(t, events, 1)
	assert.Equal(t, spilled, events[0].Context.Path)
	assert.Equal(t, "build_log", events[0].Call.Name)
	require.NotEmpty(t, spilled)
	_, err = os.Stat(filepath.Join(root, filepath.Dir(spilled)))
	assert.ErrorIs(t, err, os.ErrNotExist, "the run's spill folder is removed when it returns")
}

// TestSpillNeverEscapesTheRoot: a spill folder that is a link to a folder
// outside the root is refused (the files go through an os.Root): nothing is
// written outside, the failure is logged and the result stays in the
// history, cut as usual.
func TestSpillNeverEscapesTheRoot(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(root, ".llmtoolkit")))
	logs := &lt.Fake{}
	logs.Returns("build_log", strings.Repeat("z", 10000))
	var buf bytes.Buffer
	model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("build_log", nil)), lt.Reply("done"))
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{
		Resolver: logs, Logger: slog.New(slog.NewTextHandler(&buf, nil)),
		ContextPolicy: agentloop.ContextPolicy{SpillBytes: 4096, SpillRoot: root},
	})
	require.NoError(t, err)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written outside the root")
	assert.Len(t, history[3].Content, 10000, "the result is kept")
	assert.Contains(t, buf.String(), "could not be spilled")
}

// TestCompaction: past CompactAt the oldest span (after the system prompt
// and the task, before the latest messages) becomes one summary message;
// the kept part starts with an assistant message, so every call keeps its
// result, and every format accepts the history. The summarizer's failure
// leaves the history as it was and the run ends on the budget.
func TestCompaction(t *testing.T) {
	var spans [][]agentloop.Message
	var mu sync.Mutex
	sum := func(_ context.Context, span []agentloop.Message) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		spans = append(spans, span)
		return fmt.Sprintf("read %d files", len(span)/2), nil
	}
	var events []agentloop.Event
	_, history, err := agentloop.Run(t.Context(), prompt(), turnsModel(20, readCall), agentloop.Options{
		Resolver: bigTool(3000), Logger: quiet, MaxIterations: 20, ContextBudget: 9000,
		ContextPolicy: agentloop.ContextPolicy{Summarize: sum, ClearAt: -1},
		OnEvent: func(e agentloop.Event) {
			if e.Kind == agentloop.EventContextCompacted {
				events = append(events, e)
			}
		},
	})
	require.NoError(t, err)
	require.NotEmpty(t, spans)
	require.Len(t, events, len(spans))
	assert.Equal(t, len(spans[0]), events[0].Context.Messages)
	assert.Greater(t, events[0].Context.TokensBefore, events[0].Context.TokensAfter)
	assert.Equal(t, agentloop.RoleAssistant, spans[0][0].Role, "the span starts after the system prompt and the task")
	assert.Equal(t, prompt(), history[:2])
	assert.True(t, strings.HasPrefix(history[2].Content, agentloop.SummaryHeader), history[2].Content)
	assert.Equal(t, agentloop.RoleAssistant, history[3].Role)
	require.NoError(t, validateFormats(history))

	failing := func(context.Context, []agentloop.Message) (string, error) { return "", errors.New("summarizer down") }
	_, history, err = agentloop.Run(t.Context(), prompt(), turnsModel(20, readCall), agentloop.Options{
		Resolver: bigTool(3000), Logger: quiet, MaxIterations: 20, ContextBudget: 9000,
		ContextPolicy: agentloop.ContextPolicy{Summarize: failing, ClearAt: -1},
	})
	require.ErrorIs(t, err, agentloop.ErrContextBudget)
	assert.ErrorContains(t, err, "summarizer down")
	require.NoError(t, validateFormats(history))
}

// ctxTracer records the context changes a Tracer is told of.
type ctxTracer struct {
	mu      sync.Mutex
	changes []agentloop.ContextChange
}

func (c *ctxTracer) StartRun(ctx context.Context) (context.Context, func(agentloop.RunEnd)) {
	return ctx, func(agentloop.RunEnd) {}
}

func (c *ctxTracer) StartModelCall(ctx context.Context, _ int) (context.Context, func(agentloop.Response, error)) {
	return ctx, func(agentloop.Response, error) {}
}

func (c *ctxTracer) ContextChanged(_ context.Context, ch agentloop.ContextChange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changes = append(c.changes, ch)
}

// TestContextChangesAreLoggedAndTraced: each clearing and compaction is a
// log record at Debug (nothing at the default Info level: quiet by
// default) and a tracer event with the tokens before and after.
func TestContextChangesAreLoggedAndTraced(t *testing.T) {
	var debug, info bytes.Buffer
	tr := &ctxTracer{}
	sum := func(context.Context, []agentloop.Message) (string, error) { return "summary", nil }
	opts := agentloop.Options{Resolver: bigTool(3000), MaxIterations: 30, ContextBudget: 12000, Tracer: tr,
		ContextPolicy: agentloop.ContextPolicy{Summarize: sum, KeepToolResults: 2, ClearAt: 5000, CompactAt: 9000}}
	opts.Logger = slog.New(slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, _, err := agentloop.Run(t.Context(), prompt(), turnsModel(30, readCall), opts)
	require.NoError(t, err)
	kinds := map[agentloop.EventKind]int{}
	for _, c := range tr.changes {
		kinds[c.Kind]++
		assert.Greater(t, c.TokensBefore, c.TokensAfter, "%+v", c)
	}
	assert.Positive(t, kinds[agentloop.EventContextCleared])
	assert.Positive(t, kinds[agentloop.EventContextCompacted])
	assert.Equal(t, kinds[agentloop.EventContextCleared], strings.Count(debug.String(), "context context_cleared"))
	assert.Equal(t, kinds[agentloop.EventContextCompacted], strings.Count(debug.String(), "context context_compacted"))
	assert.Contains(t, debug.String(), "tokens_before=")

	opts.Logger = slog.New(slog.NewTextHandler(&info, nil))
	_, _, err = agentloop.Run(t.Context(), prompt(), turnsModel(30, readCall), opts)
	require.NoError(t, err)
	assert.Empty(t, info.String(), "quiet by default")
}

// stepJournal is a fake durable engine that keys each step by its place in
// the run, runs the tools of a turn one after the other, and "dies" (fails
// as an engine does when its process is killed) after limit steps.
type stepJournal struct {
	t       *testing.T
	entries []json.RawMessage
	keys    []string
	seen    []string // the ModelStep messages of each model step, as JSON
	next    int
	limit   int // 0: none
	summary int // compaction steps actually run
}

var errKilled = errors.New("the process was killed")

func (j *stepJournal) step(key string, run func() any, out any) error {
	i := j.next
	j.next++
	if i < len(j.entries) {
		require.Equal(j.t, j.keys[i], key, "step %d replays the same step", i)
		return json.Unmarshal(j.entries[i], out)
	}
	if j.limit > 0 && i >= j.limit {
		return errKilled
	}
	b, err := json.Marshal(run())
	require.NoError(j.t, err)
	j.entries, j.keys = append(j.entries, b), append(j.keys, key)
	return json.Unmarshal(b, out)
}

func (j *stepJournal) Model(ctx context.Context, step agentloop.ModelStep, call func(context.Context) (agentloop.Response, error)) (agentloop.Response, error) {
	key := fmt.Sprintf("model/%d", step.Iteration)
	if step.Compaction {
		key = fmt.Sprintf("compact/%d", step.Iteration)
	}
	b, err := json.Marshal(step.Messages)
	require.NoError(j.t, err)
	j.seen = append(j.seen, key+" "+string(b))
	var o agentloop.ModelOutcome
	if err := j.step(key, func() any {
		if step.Compaction {
			j.summary++
		}
		return agentloop.EncodeModel(call(ctx))
	}, &o); err != nil {
		return agentloop.Response{}, err
	}
	return o.Unpack()
}

func (j *stepJournal) Tools(ctx context.Context, step agentloop.ToolsStep, run func(context.Context, int) llmtoolkit.Result) ([]llmtoolkit.Result, error) {
	out := make([]llmtoolkit.Result, len(step.Calls))
	for i, c := range step.Calls {
		var o agentloop.ToolOutcome
		if err := j.step(fmt.Sprintf("tool/%d/%d/%s", step.Iteration, i, c.ID), func() any { return agentloop.EncodeResult(run(ctx, i)) }, &o); err != nil {
			return nil, err
		}
		out[i] = o.Result()
	}
	return out, nil
}

// TestClearingAndCompactionReplayIdentically: a run that clears, spills
// and compacts through an Executor, killed after its first compaction and
// resumed from its journal, sends the model exactly the histories an
// uninterrupted run sends (the compaction's summary read back, not asked
// again) and ends with the same history.
func TestClearingAndCompactionReplayIdentically(t *testing.T) {
	const turns = 40
	root := t.TempDir()
	var sums int
	sum := func(_ context.Context, span []agentloop.Message) (string, error) {
		sums++
		return fmt.Sprintf("summary %d of %d messages", sums, len(span)), nil
	}
	opts := func(x agentloop.Executor) agentloop.Options {
		return agentloop.Options{Resolver: bigTool(3000), Logger: quiet, MaxIterations: turns, Executor: x, ContextBudget: 9000,
			ContextPolicy: agentloop.ContextPolicy{Summarize: sum, KeepToolResults: 2, SpillBytes: 2048, SpillRoot: root}}
	}
	ctx := llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) { sc.RunID = "run-1" })
	whole := &stepJournal{t: t}
	_, want, err := agentloop.Run(ctx, prompt(), turnsModel(turns, readCall), opts(whole))
	require.NoError(t, err)
	require.Positive(t, whole.summary)
	first := -1
	for i, k := range whole.keys {
		if strings.HasPrefix(k, "compact/") {
			first = i
			break
		}
	}
	require.Positive(t, first)

	sums = 0
	killed := &stepJournal{t: t, limit: first + 3}
	_, _, err = agentloop.Run(ctx, prompt(), turnsModel(turns, readCall), opts(killed))
	var ee *agentloop.ExecutorError
	require.ErrorAs(t, err, &ee)
	require.ErrorIs(t, err, errKilled)
	require.Equal(t, 1, sums)

	resumed := &stepJournal{t: t, entries: killed.entries, keys: killed.keys}
	_, got, err := agentloop.Run(ctx, prompt(), turnsModel(turns, readCall), opts(resumed))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the resumed run ends with the same history")
	assert.Equal(t, whole.seen, resumed.seen, "every model step (compactions included) was sent the same messages")
	assert.Equal(t, whole.keys, resumed.keys)
	assert.Equal(t, whole.summary-1, resumed.summary, "the recorded compaction is read back, not run again")
	require.NoError(t, (agentloop.ContextPolicy{SpillRoot: root}).RemoveSpillFiles("run-1"))
	entries, err := os.ReadDir(filepath.Join(root, agentloop.DefaultSpillDir))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the run's folder is removed")
	assert.Equal(t, ".gitignore", entries[0].Name())
}

// TestClearingLeavesSentHistoriesAlone: the histories sent to the model
// before a clearing keep what they held (a host may keep them, log them on
// another goroutine, or an engine may hold them): the loop clears a copy.
func TestClearingLeavesSentHistoriesAlone(t *testing.T) {
	var sent [][]agentloop.Message
	var copies [][]agentloop.Message
	model := turnsModel(12, readCall)
	send := func(ctx context.Context, msgs []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
		sent = append(sent, msgs)
		copies = append(copies, append([]agentloop.Message(nil), msgs...))
		return model(ctx, msgs, tools)
	}
	_, history, err := agentloop.Run(t.Context(), prompt(), send, agentloop.Options{
		Resolver: bigTool(3000), Logger: quiet, MaxIterations: 12, ContextBudget: 20000, ContextPolicy: agentloop.ContextPolicy{KeepToolResults: 2}})
	require.NoError(t, err)
	cleared := false
	for _, m := range history {
		cleared = cleared || strings.HasPrefix(m.Content, agentloop.ClearedPrefix)
	}
	require.True(t, cleared)
	for i := range sent {
		assert.Equal(t, copies[i], sent[i], "request %d is as it was sent", i+1)
	}
}

// TestParallelSpills: the calls of one turn run in parallel and spill at
// once, each to its own file, each reported once.
func TestParallelSpills(t *testing.T) {
	root := t.TempDir()
	logs := &lt.Fake{}
	logs.Handle("log", func(_ context.Context, c llmtoolkit.Call) (string, error) {
		return strings.Repeat(fmt.Sprint(c.ID, " line\n"), 2000), nil
	})
	var calls []llmtoolkit.Call
	for i := range 8 {
		calls = append(calls, llmtoolkit.Call{ID: fmt.Sprint("p", i), Name: "log"})
	}
	var paths []string
	model := lt.NewScriptedModel(t, lt.CallTools(calls...), lt.Respond(func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
		for _, m := range msgs[len(msgs)-8:] {
			i := strings.Index(m.Content, agentloop.DefaultSpillDir)
			require.GreaterOrEqual(t, i, 0)
			p := m.Content[i : i+strings.IndexByte(m.Content[i:], '"')]
			data, err := os.ReadFile(filepath.Join(root, p))
			require.NoError(t, err)
			assert.Equal(t, strings.Repeat(m.ToolCallID+" line\n", 2000), string(data), "each file holds its own call's whole result")
			paths = append(paths, p)
		}
		return agentloop.Response{Content: "done"}, nil
	}))
	spills := 0
	_, _, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: logs, Logger: quiet, MaxParallel: 8,
		ContextPolicy: agentloop.ContextPolicy{SpillBytes: 4096, SpillRoot: root},
		OnEvent: func(e agentloop.Event) {
			if e.Kind == agentloop.EventResultSpilled {
				spills++
			}
		}})
	require.NoError(t, err)
	assert.Equal(t, 8, spills)
	assert.Len(t, paths, 8)
}
