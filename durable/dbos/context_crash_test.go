package dbos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// contextTurns is how many model calls the context agent's run makes.
const contextTurns = 20

// contextAgent is the agent of the context crash test: a long run under a
// small context budget, so that it clears old results, spills them and
// compacts. The model answers from the history alone (the turn is read
// from the last result's call id, since compaction removes earlier turns)
// and logs each request's turn and a hash of its messages in
// requests.log; the summarizer logs each run in summaries.log; the tool
// "read" logs its side effect in effects.log and blocks on spec.Block.
func contextAgent(spec childSpec) AgentFunc {
	return func(ctx context.Context, run Run) (agentloop.SendFunc, agentloop.Options, error) {
		if err := appendLine(spec.Dir, "attempts.log", spec.Executor); err != nil {
			return nil, agentloop.Options{}, err
		}
		send := func(ctx context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
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
			b, err := json.Marshal(msgs)
			if err != nil {
				return agentloop.Response{}, err
			}
			sum := sha256.Sum256(b)
			if err := appendLine(spec.Dir, "requests.log", fmt.Sprintf("turn %d %s", k, hex.EncodeToString(sum[:8]))); err != nil {
				return agentloop.Response{}, err
			}
			if k >= contextTurns {
				return agentloop.Response{Content: "done", StopReason: "stop"}, nil
			}
			id := "c" + strconv.Itoa(k)
			return agentloop.Response{
				Content:    fmt.Sprintf("Turn %d: reading part %d next. ", k, k) + strings.Repeat("Thinking about the parts read so far. ", 16),
				ToolCalls:  []llmtoolkit.Call{{ID: id, Name: "read", Arguments: map[string]any{"part": id}}},
				StopReason: "tool_calls",
			}, nil
		}
		tool := llmtoolkit.MustTool("read", "reads a part", map[string]any{
			"type": "object", "properties": map[string]any{"part": map[string]any{"type": "string"}}, "required": []any{"part"},
		})
		resolve := llmtoolkit.ResolverFunc(func(ctx context.Context, call llmtoolkit.Call) (string, error) {
			if err := appendLine(spec.Dir, "effects.log", call.ID); err != nil {
				return "", err
			}
			if call.ID == spec.Block {
				if err := os.WriteFile(filepath.Join(spec.Dir, "blocked"), nil, 0o644); err != nil {
					return "", err
				}
				<-ctx.Done() // the parent kills the process here
				return "", ctx.Err()
			}
			var b strings.Builder
			for i := 0; b.Len() < 3000; i++ {
				fmt.Fprintf(&b, "part %s line %d\n", call.ID, i)
			}
			return b.String(), nil
		})
		summarize := func(_ context.Context, span []agentloop.Message) (string, error) {
			if err := appendLine(spec.Dir, "summaries.log", fmt.Sprintf("%d messages", len(span))); err != nil {
				return "", err
			}
			var calls []string
			for _, m := range span {
				for _, c := range m.ToolCalls {
					calls = append(calls, c.ID)
				}
			}
			return "Parts read: " + strings.Join(calls, ", "), nil
		}
		ws := filepath.Join(spec.Dir, "ws")
		if err := os.MkdirAll(ws, 0o755); err != nil {
			return nil, agentloop.Options{}, err
		}
		opts := agentloop.Options{
			Resolver: llmtoolkit.Indexed(resolve, []llmtoolkit.Tool{tool}), MaxIterations: contextTurns,
			OnEvent: func(e agentloop.Event) {
				if e.Context != nil {
					_ = appendLine(spec.Dir, "changes.log", string(e.Kind))
				}
			},
			ContextBudget: 4000,
			ContextPolicy: agentloop.ContextPolicy{Summarize: summarize, KeepToolResults: 2, KeepRecent: 1000, SpillBytes: 2048, SpillRoot: ws},
		}
		switch spec.Policy {
		case "budget":
			opts.ContextBudget = 6000
		case "no summarizer":
			opts.ContextPolicy.Summarize = nil
		}
		return send, opts, nil
	}
}

// TestCrashResumeWithContextPolicy: a run that clears, spills and
// compacts is SIGKILLed inside a tool call after its first compaction and
// resumed by another process. The resumed run ends with the history of
// an uninterrupted run, message for message; it asks the model only the
// turns not done before the crash, each with exactly the messages the
// uninterrupted run sent (a hash of each request); the recorded
// compactions are read back, not summarized again.
func TestCrashResumeWithContextPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) { crashWithContextPolicy(t, db(t)) })
	}
}

func crashWithContextPolicy(t *testing.T, db string) {
	refDir := t.TempDir()
	ref := childSpec{DB: "sqlite:" + filepath.Join(t.TempDir(), "ref.db"), Dir: refDir, Run: "run-1", Executor: "a", Start: true, Context: true}
	startChild(t, ref).wait(t, 90*time.Second)
	want := readResult(t, refDir, "a")
	require.NoError(t, want.Err())
	refSummaries := lines(t, refDir, "summaries.log")
	require.NotEmpty(t, refSummaries, "the run compacts")

	dir := t.TempDir()
	spec := childSpec{DB: db, Dir: dir, Run: "run-1", Executor: "a", Start: true, Block: "c14", Context: true}
	first := startChild(t, spec)
	waitFile(t, first, filepath.Join(dir, "blocked"), 60*time.Second)
	first.kill(t)
	require.NotEmpty(t, lines(t, dir, "summaries.log"), "the first process compacted before it was killed")
	spec.Start, spec.Block = false, ""
	second := startChild(t, spec)
	second.wait(t, 90*time.Second)
	got := readResult(t, dir, "a")
	require.NoError(t, got.Err())

	assert.Equal(t, want.Messages, got.Messages, "the resumed run ends with the uninterrupted run's history")
	assert.Equal(t, want.Response, got.Response)
	assert.Equal(t, refSummaries, lines(t, dir, "summaries.log"), "each compaction summarized once, across both processes")
	assert.Equal(t, lines(t, refDir, "requests.log"), lines(t, dir, "requests.log"), "each turn asked once, with the same messages")
	effects := lines(t, dir, "effects.log")
	assert.Equal(t, 2, effects["c14"], "the interrupted call is redone")
	assert.Equal(t, (contextTurns-1)+1, total(effects), "the others ran once")
	assert.Equal(t, map[string]int{"a": 2}, lines(t, dir, "attempts.log"))
	entries, err := os.ReadDir(filepath.Join(dir, "ws", agentloop.DefaultSpillDir))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the run's spill files are removed when it is over")
	assert.Equal(t, ".gitignore", entries[0].Name())
	changes := lines(t, refDir, "changes.log")
	for _, k := range []agentloop.EventKind{agentloop.EventContextCleared, agentloop.EventResultSpilled, agentloop.EventContextCompacted} {
		assert.Positive(t, changes[string(k)], "the run had %s events: %v", k, changes)
	}
	t.Logf("context crash test: %d messages at the end; reference run's changes %v; summaries %v; requests %d",
		len(got.Messages), changes, lines(t, dir, "summaries.log"), total(lines(t, dir, "requests.log")))
}

// TestCrashResumeWithAnotherContextPolicy: a run that compacted is
// SIGKILLed and resumed by a process whose agent has another context
// policy (a larger budget; no summarizer). The run stops with
// ErrAgentChanged before any step is replayed: replayed under the other
// policy, its history would be cleared and compacted otherwise than it
// was (before: DBOS's UnexpectedStep some turns later, where a
// compaction step moved, after replaying the turns before it into the
// other policy; or, had no step moved, another history). Resumed under
// the same policy, the run completes: TestCrashResumeWithContextPolicy.
func TestCrashResumeWithAnotherContextPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, policy := range []string{"budget", "no summarizer"} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			spec := childSpec{DB: "sqlite:" + filepath.Join(t.TempDir(), "dbos.db"), Dir: dir, Run: "run-1", Executor: "a", Start: true, Block: "c14", Context: true}
			first := startChild(t, spec)
			waitFile(t, first, filepath.Join(dir, "blocked"), 60*time.Second)
			first.kill(t)
			requests := lines(t, dir, "requests.log")

			spec.Start, spec.Block, spec.Policy = false, "", policy
			second := startChild(t, spec)
			code := second.exitCode(t, 90*time.Second)
			require.NoFileExists(t, filepath.Join(dir, "result-a.json"), "the run must not complete; output:\n%s", second.output())
			assert.Equal(t, 1, code, "output:\n%s", second.output())
			b, err := os.ReadFile(filepath.Join(dir, "error-a.json"))
			require.NoError(t, err, "output:\n%s", second.output())
			var got childError
			require.NoError(t, json.Unmarshal(b, &got))
			assert.True(t, got.AgentChanged, "errors.Is(err, ErrAgentChanged): %s", got.Message)
			assert.Contains(t, got.Message, "context policy")
			assert.Equal(t, requests, lines(t, dir, "requests.log"), "the model is not called again")
			assert.Equal(t, 1, lines(t, dir, "effects.log")["c14"], "no tool runs again")
		})
	}
}

func readResult(t *testing.T, dir, executor string) Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "result-"+executor+".json"))
	require.NoError(t, err)
	var res Result
	require.NoError(t, json.Unmarshal(b, &res))
	return res
}
