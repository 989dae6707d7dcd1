package dbos

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// databases are the system databases the crash tests run on: SQLite in
// the test's directory, and PostgreSQL when LLMTOOLKIT_TEST_POSTGRES_DSN
// is set (under CI=true it must be).
func databases(t *testing.T) map[string]func(t *testing.T) string {
	t.Helper()
	dbs := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "dbos.db") },
	}
	dsn := os.Getenv("LLMTOOLKIT_TEST_POSTGRES_DSN")
	switch {
	case dsn != "":
		dbs["postgres"] = func(t *testing.T) string { return freshSchemaDSN(t, dsn) }
	case os.Getenv("CI") == "true":
		t.Fatal("CI=true but LLMTOOLKIT_TEST_POSTGRES_DSN is unset: start one with `eval \"$(bash scripts/postgres.sh)\"`")
	default:
		t.Log("LLMTOOLKIT_TEST_POSTGRES_DSN is unset: the PostgreSQL cases are skipped (eval \"$(bash scripts/postgres.sh)\" enables them)")
	}
	return dbs
}

// crash runs the crash scenario: a child starts the run and is killed with
// SIGKILL inside the tool call "call-2" (its side effect done, its step not
// recorded); a second child, launched with the same executor ID, resumes
// it. It returns the directory with the counters.
func crash(t *testing.T, db string, plain, idempotent bool) (string, Result) {
	t.Helper()
	dir := t.TempDir()
	spec := childSpec{DB: db, Dir: dir, Run: "run-1", Executor: "a", Start: true, Block: "call-2", Plain: plain, Idempotent: idempotent,
		TraceDB: filepath.Join(dir, "traces.db")}
	first := startChild(t, spec)
	waitFile(t, first, filepath.Join(dir, "blocked"), 60*time.Second)
	first.kill(t)
	require.NoFileExists(t, filepath.Join(dir, "result-a.json"), "the first process must not finish")

	spec.Start, spec.Block = false, ""
	second := startChild(t, spec)
	second.wait(t, 90*time.Second)
	b, err := os.ReadFile(filepath.Join(dir, "result-a.json"))
	require.NoError(t, err, "the resumed process wrote no result; output:\n%s", second.output())
	var res Result
	require.NoError(t, json.Unmarshal(b, &res))
	return dir, res
}

// TestCrashResume is the crash test: the resumed run completes; the
// model was called once per turn (4); every completed side effect
// happened once; the interrupted one (call-2) is redone once: twice in
// all, or once when the tool uses its call ID as idempotency key.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				name       string
				idempotent bool
				call2      int
			}{
				{"plain tool", false, 2},
				{"idempotent tool", true, 1},
			} {
				t.Run(tc.name, func(t *testing.T) {
					dir, res := crash(t, db(t), false, tc.idempotent)
					require.NoError(t, res.Err())
					assert.Equal(t, "done", res.Response.Content)
					assert.Equal(t, map[string]int{"turn 1": 1, "turn 2": 1, "turn 3": 1, "turn 4": 1}, lines(t, dir, "model.log"), "one model call per turn")
					assert.Equal(t, map[string]int{"call-1": 1, "call-2": tc.call2, "call-3a": 1, "call-3b": 1}, lines(t, dir, "effects.log"), "completed side effects once, the interrupted one redone once")
					assert.Equal(t, map[string]int{"a": 2}, lines(t, dir, "attempts.log"), "two attempts")
					traceRows(t, dir)
					t.Logf("counts with steps (%s): model %v, effects %v", tc.name, lines(t, dir, "model.log"), lines(t, dir, "effects.log"))
				})
			}
		})
	}
}

// TestCrashResumeWithoutSteps measures what the steps save: the same run
// with no executor (every attempt starts the loop over) calls the model
// again for the turns done before the crash and repeats their side
// effects.
func TestCrashResumeWithoutSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir, res := crash(t, "sqlite:"+filepath.Join(t.TempDir(), "dbos.db"), true, false)
	require.NoError(t, res.Err())
	model, effects := lines(t, dir, "model.log"), lines(t, dir, "effects.log")
	t.Logf("counts without steps: model %v, effects %v", model, effects)
	assert.Equal(t, 6, total(model), "turns 1 and 2 are asked again")
	assert.Equal(t, 6, total(effects), "call-1 and call-2 run twice")
}

// TestResumeRace: after the crash, two processes with executor IDs of
// their own take over the dead one's runs at once; the run is resumed by
// one of them only: one new attempt, the counts of TestCrashResume.
func TestResumeRace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			spec := childSpec{DB: db(t), Dir: dir, Run: "run-1", Executor: "a", Start: true, Block: "call-2"}
			first := startChild(t, spec)
			waitFile(t, first, filepath.Join(dir, "blocked"), 60*time.Second)
			first.kill(t)

			goFile := filepath.Join(dir, "go")
			b, c := spec, spec
			b.Start, b.Block, b.Recover, b.GoFile, b.Executor = false, "", "a", goFile, "b"
			c.Start, c.Block, c.Recover, c.GoFile, c.Executor = false, "", "a", goFile, "c"
			pb, pc := startChild(t, b), startChild(t, c)
			time.Sleep(2 * time.Second) // both launched, waiting for the go file
			require.NoError(t, os.WriteFile(goFile, nil, 0o644))
			pb.wait(t, 90*time.Second)
			pc.wait(t, 90*time.Second)

			attempts := lines(t, dir, "attempts.log")
			assert.Equal(t, 1, attempts["a"])
			assert.Equal(t, 1, attempts["b"]+attempts["c"], "one process resumed the run: %v; recovered: %v", attempts, lines(t, dir, "recovered.log"))
			assert.Equal(t, map[string]int{"turn 1": 1, "turn 2": 1, "turn 3": 1, "turn 4": 1}, lines(t, dir, "model.log"))
			assert.Equal(t, map[string]int{"call-1": 1, "call-2": 2, "call-3a": 1, "call-3b": 1}, lines(t, dir, "effects.log"))
			for _, ex := range []string{"b", "c"} {
				out, err := os.ReadFile(filepath.Join(dir, "result-"+ex+".json"))
				require.NoError(t, err)
				assert.True(t, strings.Contains(string(out), `"done"`), "both read the one result")
			}
		})
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// traceRows checks the trace rows of the crash test's run: call-1 (done by
// the first attempt) and call-2, call-3a, call-3b (by the resumed one) all
// carry the run's tenant and conversation IDs.
func traceRows(t *testing.T, dir string) {
	t.Helper()
	db, err := trace.OpenSQLite(filepath.Join(dir, "traces.db"))
	require.NoError(t, err)
	rows, err := trace.List(context.Background(), db, trace.Filter{TenantID: testTenant})
	require.NoError(t, err)
	byCall := map[string]int{}
	for _, r := range rows {
		assert.Equal(t, ConversationID("run-1"), r.ConversationID, "row of %s", r.ToolName)
		assert.Equal(t, testTenant, r.TenantID)
		assert.Nil(t, r.AgentID, "the top-level agent")
		byCall[fmt.Sprint(r.Arguments["line"])]++
	}
	assert.Len(t, byCall, 4, "a row for each call, from both attempts: %v", byCall)
}

// TestResumeRaceSameExecutor: after the crash, two processes launch at
// once with the dead one's executor ID, each resuming its runs at Launch.
// Without the executor lock both could resume the run (seen: 3 attempts,
// the interrupted side effect 3 times, in 1 of 5 tries); with it, one is
// refused with ErrExecutorInUse, or finds the run done: one new attempt.
func TestResumeRaceSameExecutor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			spec := childSpec{DB: db(t), Dir: dir, Run: "run-1", Executor: "a", Start: true, Block: "call-2"}
			first := startChild(t, spec)
			waitFile(t, first, filepath.Join(dir, "blocked"), 60*time.Second)
			first.kill(t)

			spec.Start, spec.Block = false, ""
			pb, pc := startChild(t, spec), startChild(t, spec)
			codes := []int{pb.exitCode(t, 90*time.Second), pc.exitCode(t, 90*time.Second)}
			assert.Contains(t, codes, 0, "one resumed the run; outputs:\n%s\n%s", pb.output(), pc.output())
			for _, c := range codes {
				assert.Contains(t, []int{0, exitInUse}, c, "outputs:\n%s\n%s", pb.output(), pc.output())
			}
			assert.Equal(t, map[string]int{"a": 2}, lines(t, dir, "attempts.log"), "one new attempt")
			assert.Equal(t, map[string]int{"turn 1": 1, "turn 2": 1, "turn 3": 1, "turn 4": 1}, lines(t, dir, "model.log"))
			assert.Equal(t, map[string]int{"call-1": 1, "call-2": 2, "call-3a": 1, "call-3b": 1}, lines(t, dir, "effects.log"))
			t.Logf("exit codes %v", codes)
		})
	}
}

// TestCrashResumeByAnotherAgent (issue 35, row 14): a run killed with
// SIGKILL under agent A is resumed by a process whose AgentFunc builds
// another agent (another tool, the same tool with another schema, other
// loop bounds), under the same ApplicationVersion. The run stops with
// ErrAgentChanged, which wraps transact.ErrStepNondeterminism, read from
// the database by the resuming process; the other agent runs no tool and
// the model is not called again (before: the run completed, the recorded
// calls answered with `unknown tool "append"`).
func TestCrashResumeByAnotherAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			for _, other := range []string{"tools", "schema", "options"} {
				t.Run(other, func(t *testing.T) {
					dir := t.TempDir()
					spec := childSpec{DB: db(t), Dir: dir, Run: "run-1", Executor: "a", Start: true, Block: "call-2"}
					first := startChild(t, spec)
					waitFile(t, first, filepath.Join(dir, "blocked"), 60*time.Second)
					first.kill(t)

					spec.Start, spec.Block, spec.Agent = false, "", other
					second := startChild(t, spec)
					code := second.exitCode(t, 90*time.Second)
					require.NoFileExists(t, filepath.Join(dir, "result-a.json"), "the run must not complete; output:\n%s", second.output())
					assert.Equal(t, 1, code, "output:\n%s", second.output())
					b, err := os.ReadFile(filepath.Join(dir, "error-a.json"))
					require.NoError(t, err, "output:\n%s", second.output())
					var got childError
					require.NoError(t, json.Unmarshal(b, &got))
					assert.True(t, got.AgentChanged, "errors.Is(err, ErrAgentChanged): %s", got.Message)
					assert.True(t, got.Nondeterminism, "errors.Is(err, transact.ErrStepNondeterminism): %s", got.Message)
					assert.True(t, got.Engine, "errors.Is(err, ErrEngine): %s", got.Message)
					assert.Contains(t, got.Message, "resumed with agent")
					assert.Equal(t, map[string]int{"a": 2}, lines(t, dir, "attempts.log"), "two attempts")
					assert.Equal(t, map[string]int{"turn 1": 1, "turn 2": 1}, lines(t, dir, "model.log"), "the model is not called again")
					assert.Equal(t, map[string]int{"call-1": 1, "call-2": 1}, lines(t, dir, "effects.log"), "the other agent ran no tool")
				})
			}
		})
	}
}
