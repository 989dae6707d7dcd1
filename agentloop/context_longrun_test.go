package agentloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// The facts the long run's later turns check.
const (
	planFact    = "PLAN-TOKEN-7"
	planFile    = "notes/plan.md"
	failureFact = "parse_test.go:42: want 3, got 4"
	longTurns   = 200
	longBudget  = 100_000
)

// codingWorkspace makes a workspace of 30 Go files of about 12 KB and a
// plan, and returns its root and the files' paths.
func codingWorkspace(t testing.TB) (string, []string) {
	root := t.TempDir()
	var files []string
	for f := range 30 {
		var b strings.Builder
		fmt.Fprintf(&b, "package pkg%d\n\n", f)
		for i := 0; b.Len() < 12<<10; i++ {
			fmt.Fprintf(&b, "// HandleFile%dItem%d handles item %d of file %d; it returns its input plus %d.\nfunc HandleFile%dItem%d(x int) int { return x + %d }\n\n", f, i, i, f, i, f, i, i)
		}
		name := fmt.Sprintf("pkg%d/file%d.go", f%5, f)
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(b.String()), 0o644))
		files = append(files, name)
	}
	plan := "# Plan\n\n" + planFact + ": rename the header parser and fix its count.\n\n" + strings.Repeat("Background notes on the parser, kept for later.\n", 40)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "notes"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, planFile), []byte(plan), 0o644))
	return root, files
}

// runTestsTool is the run_tests tool of the long run: a test log of about
// 30 KB, which fails in iteration 50 only.
func runTestsTool() *lt.Fake {
	f := &lt.Fake{}
	f.Handle("run_tests", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		n := llmtoolkit.ScopeFrom(ctx).Iteration
		var b strings.Builder
		for i := 0; b.Len() < 15<<10; i++ {
			fmt.Fprintf(&b, "=== RUN   TestCase%d\n--- PASS: TestCase%d (0.00s)\n", i, i)
		}
		if n == 50 {
			b.WriteString("=== RUN   TestParseHeader\n--- FAIL: TestParseHeader (0.01s)\n    " + failureFact + "\n")
		}
		for i := 0; b.Len() < 30<<10; i++ {
			fmt.Fprintf(&b, "=== RUN   TestMore%d\n--- PASS: TestMore%d (0.00s)\n", i, i)
		}
		if n == 50 {
			b.WriteString("FAIL\nFAIL\texample.com/pkg\t0.02s\n")
		} else {
			b.WriteString("PASS\nok  \texample.com/pkg\t0.02s\n")
		}
		return b.String(), nil
	})
	return f
}

// factSummarizer is the host's summarizer of the long run: it keeps what a
// model's summary would (the calls made, the lines that report failures
// or name the plan, earlier summaries' facts), deterministically.
func factSummarizer(_ context.Context, span []agentloop.Message) (string, error) {
	var facts []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			facts = append(facts, s)
		}
	}
	calls := 0
	for _, m := range span {
		calls += len(m.ToolCalls)
		for _, c := range m.ToolCalls {
			args, _ := json.Marshal(c.Arguments)
			add("- called " + c.Name + " " + string(args))
		}
		for _, line := range strings.Split(m.Content, "\n") {
			if strings.Contains(line, "FAIL") || strings.Contains(line, planFact) || strings.Contains(line, agentloop.DefaultSpillDir) || strings.HasPrefix(line, "- ") {
				add("- " + strings.TrimPrefix(strings.TrimSpace(line), "- "))
			}
		}
	}
	out := fmt.Sprintf("%d tool calls were made. Facts:\n%s", calls, strings.Join(facts, "\n"))
	if len(out) > 16<<10 {
		out = out[:16<<10]
	}
	return out, nil
}

// longRun drives the scripted 200-turn coding run and records what each
// request held.
type longRun struct {
	t        *testing.T
	root     string
	files    []string
	managed  bool
	mu       sync.Mutex
	sizes    []int // tokens of each request, as the simulated provider counts them
	invalid  []string
	routes   map[string]string // how each checked fact was reached
	followUp map[int]llmtoolkit.Call
}

// providerCount is the simulated provider's count of a request: its
// Anthropic encoding's bytes / 3.5.
func providerCount(t testing.TB, msgs []agentloop.Message, tools []llmtoolkit.Tool) int {
	system, am, err := provider.AnthropicMessages(msgs)
	require.NoError(t, err)
	data, err := json.Marshal(map[string]any{"system": system, "messages": am, "tools": provider.AnthropicTools(tools)})
	require.NoError(t, err)
	return len(data) * 2 / 7
}

func (r *longRun) turn(k int) lt.Turn {
	if k == longTurns {
		return lt.Respond(func(_ context.Context, msgs []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
			r.observe(k, msgs, tools)
			return agentloop.Response{Content: "done", StopReason: "end_turn"}, nil
		})
	}
	return lt.Respond(func(_ context.Context, msgs []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
		usage := r.observe(k, msgs, tools)
		call := r.plan(k, msgs)
		call.ID = fmt.Sprintf("toolu_%03d", k)
		resp, err := signedTurn(k, []llmtoolkit.Call{call})
		resp.Usage = usage
		return resp, err
	})
}

// observe records request k and checks it.
func (r *longRun) observe(k int, msgs []agentloop.Message, tools []llmtoolkit.Tool) agentloop.Usage {
	n := providerCount(r.t, msgs, tools)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sizes = append(r.sizes, n)
	if r.managed {
		if err := validateFormats(msgs); err != nil {
			r.invalid = append(r.invalid, fmt.Sprintf("request %d: %v", k, err))
		}
	}
	return agentloop.Usage{InputTokens: n, ContextTokens: n, OutputTokens: 50}
}

// plan is the call of turn k; turns 150 to 162 check that the plan read in
// turn 3 and the failure of turn 50 are still reachable.
func (r *longRun) plan(k int, msgs []agentloop.Message) llmtoolkit.Call {
	if c, ok := r.followUp[k]; ok {
		return c
	}
	switch {
	case k == 3:
		return lt.Call("read_file", map[string]any{"path": planFile})
	case k == 152:
		r.checkFollowUp(msgs, "plan", planFact)
	case k == 162:
		r.checkFollowUp(msgs, "failure", failureFact)
	case k == 150:
		r.reach(k, msgs, "plan", planFact, "/3-0-read_file.txt", planFile, lt.Call("read_file", map[string]any{"path": planFile}))
	case k == 160:
		r.reach(k, msgs, "failure", failureFact, "/50-0-run_tests.txt", "\x00never", llmtoolkit.Call{})
	case k%10 == 0:
		return lt.Call("run_tests", nil)
	case k%7 == 0:
		return lt.Call("grep", map[string]any{"pattern": fmt.Sprintf("HandleFile%dItem1[0-9]\\b", k%30)})
	}
	return lt.Call("read_file", map[string]any{"path": r.files[k%len(r.files)]})
}

// reach checks, in request k, that fact is in the history; if not, a
// message (the stub of the call that found it, or a summary) must say how
// to get it again: the spill file that holds it (one whose name holds
// spillMatch), grepped in the next turn, or the call to make again (one
// whose arguments name callMatch).
func (r *longRun) reach(k int, msgs []agentloop.Message, name, fact, spillMatch, callMatch string, again llmtoolkit.Call) {
	kind := func(m agentloop.Message) string {
		switch {
		case strings.HasPrefix(m.Content, agentloop.SummaryHeader):
			return "the compaction summary"
		case strings.HasPrefix(m.Content, agentloop.ClearedPrefix):
			return "a cleared result's stub"
		}
		return "a " + string(m.Role) + " message"
	}
	for _, m := range msgs {
		if strings.Contains(m.Content, fact) {
			r.routes[name] = "in the history (" + kind(m) + ")"
			return
		}
	}
	for _, m := range msgs {
		i := strings.Index(m.Content, agentloop.DefaultSpillDir)
		for i >= 0 {
			path := m.Content[i:]
			path = path[:strings.IndexAny(path, " \\\"")]
			if strings.HasSuffix(path, spillMatch) {
				r.followUp[k+1] = lt.Call("grep", map[string]any{"pattern": "FAIL|got [0-9]|" + planFact, "path": path})
				r.routes[name] = "from the spill file " + kind(m) + " names"
				return
			}
			j := strings.Index(m.Content[i+1:], agentloop.DefaultSpillDir)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	for _, m := range msgs {
		if m.Role != agentloop.RoleAssistant && strings.Contains(m.Content, callMatch) {
			r.followUp[k+1] = again
			r.routes[name] = "by calling again, as " + kind(m) + " says"
			return
		}
	}
	r.t.Errorf("request %d: the %s (%q) is neither in the history nor named by a stub or summary", k, name, fact)
}

func (r *longRun) checkFollowUp(msgs []agentloop.Message, name, fact string) {
	if r.routes[name] == "" || strings.HasPrefix(r.routes[name], "in the history") {
		return
	}
	last := msgs[len(msgs)-1]
	if !assert.Contains(r.t, last.Content, fact, "the %s, got again as the stub says", name) {
		r.routes[name] += " (FAILED)"
	}
}

// TestLongRunStaysInsideTheBudget: a scripted 200-turn coding run over a
// real workspace (codetools, 30 files of 12 KB, a 30 KB test log every 10
// turns) whose history, unmanaged, grows far past a 100k-token budget.
// With the policy on, every request stays under the budget (as the
// simulated provider counts it), the history is valid for every provider
// format at every turn, and the plan read in turn 3 and the test failure
// of turn 50 are still reachable in turns 150 and 160.
func TestLongRunStaysInsideTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("200 turns")
	}
	root, files := codingWorkspace(t)
	ct, err := codetools.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { ct.Close() })
	tools := llmtoolkit.Compose(ct, runTestsTool())

	run := func(managed bool) (*longRun, []agentloop.Message, map[agentloop.EventKind]int, []int) {
		r := &longRun{t: t, root: root, files: files, managed: managed, routes: map[string]string{}, followUp: map[int]llmtoolkit.Call{}}
		turns := make([]lt.Turn, longTurns)
		for k := range turns {
			turns[k] = r.turn(k + 1)
		}
		model := lt.NewScriptedModel(t, turns...)
		events := map[agentloop.EventKind]int{}
		var loopCounts []int
		opts := agentloop.Options{Resolver: tools, MaxIterations: longTurns, Logger: quiet,
			OnEvent: func(e agentloop.Event) {
				if e.Context != nil {
					events[e.Kind]++
				}
			},
			OnIteration: func(it agentloop.Iteration) { loopCounts = append(loopCounts, it.ContextTokens) },
		}
		if managed {
			opts.ContextBudget = longBudget
			opts.ContextPolicy = agentloop.ContextPolicy{Summarize: factSummarizer, SpillBytes: 16 << 10, SpillRoot: root}
		}
		resp, history, err := agentloop.Run(t.Context(), prompt(), model.Send, opts)
		require.NoError(t, err)
		require.Equal(t, "done", resp.Content)
		return r, history, events, loopCounts
	}

	plain, _, _, _ := run(false)
	managed, history, events, loopCounts := run(true)

	assert.Empty(t, managed.invalid, "the history is valid for every format at every turn")
	require.Len(t, managed.sizes, longTurns)
	for k, n := range managed.sizes {
		assert.LessOrEqual(t, n, longBudget, "request %d", k+1)
	}
	for k, n := range loopCounts {
		assert.LessOrEqual(t, n, longBudget, "the loop's count of request %d", k+1)
	}
	assert.Greater(t, slices.Max(plain.sizes), longBudget, "unmanaged, the history outgrows the budget")
	assert.NotEmpty(t, managed.routes["plan"])
	assert.NotEmpty(t, managed.routes["failure"])
	assert.Positive(t, events[agentloop.EventContextCleared])
	assert.Positive(t, events[agentloop.EventResultSpilled])
	assert.Positive(t, events[agentloop.EventContextCompacted])
	require.NoError(t, validateFormats(history))
	_, err = os.Stat(filepath.Join(root, agentloop.DefaultSpillDir))
	if err == nil {
		entries, _ := os.ReadDir(filepath.Join(root, agentloop.DefaultSpillDir))
		for _, e := range entries {
			assert.Equal(t, ".gitignore", e.Name(), "the run's spill files are removed when it returns")
		}
	}

	t.Logf("tokens per request over %d turns (simulated provider count: Anthropic JSON bytes / 3.5):", longTurns)
	t.Logf("  without the policy: max %d, median %d", slices.Max(plain.sizes), median(plain.sizes))
	t.Logf("  with the policy:    max %d, median %d (loop's own count: max %d, median %d)", slices.Max(managed.sizes), median(managed.sizes), slices.Max(loopCounts), median(loopCounts))
	t.Logf("  clearings %d, spills %d, compactions %d", events[agentloop.EventContextCleared], events[agentloop.EventResultSpilled], events[agentloop.EventContextCompacted])
	t.Logf("  plan of turn 3 reached %s; failure of turn 50 reached %s", managed.routes["plan"], managed.routes["failure"])
}

func median(xs []int) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
