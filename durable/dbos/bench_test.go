package dbos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/stretchr/testify/require"
)

// benchTurns is the number of tool turns of a benchmark run: it makes
// benchTurns+1 model steps and benchTurns tool steps.
const benchTurns = 9

// benchAgent answers with one tool call per turn for benchTurns turns,
// then with text; the tool returns at once.
func benchAgent(context.Context, Run) (agentloop.SendFunc, agentloop.Options, error) {
	send := func(ctx context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
		turn := 0
		for _, m := range msgs {
			if m.Role == agentloop.RoleAssistant {
				turn++
			}
		}
		if turn == benchTurns {
			return agentloop.Response{Content: "done"}, nil
		}
		return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: fmt.Sprint("c", turn), Name: "noop", Arguments: map[string]any{}}}}, nil
	}
	tool := llmtoolkit.MustTool("noop", "does nothing", map[string]any{"type": "object"})
	resolve := llmtoolkit.ResolverFunc(func(context.Context, llmtoolkit.Call) (string, error) { return "ok", nil })
	return send, agentloop.Options{Resolver: llmtoolkit.Indexed(resolve, []llmtoolkit.Tool{tool}), MaxIterations: benchTurns + 1, Logger: quietLogger()}, nil
}

// BenchmarkStep measures the cost of a step: whole runs of 2*benchTurns+1
// steps, with the executor (each step recorded) and without (the same
// workflow, no steps); ns/step is the run's time over its steps. The cost
// of a step is the difference of the two ns/step.
func BenchmarkStep(b *testing.B) {
	dbs := map[string]func(t testing.TB) string{
		"sqlite": func(t testing.TB) string { return "sqlite:" + filepath.Join(t.TempDir(), "dbos.db") },
	}
	if dsn := os.Getenv("LLMTOOLKIT_TEST_POSTGRES_DSN"); dsn != "" {
		dbs["postgres"] = func(t testing.TB) string { return freshSchemaDSN(t, dsn) }
	}
	for _, name := range []string{"sqlite", "postgres"} {
		db, ok := dbs[name]
		if !ok {
			continue
		}
		for _, plain := range []bool{false, true} {
			mode := "steps"
			if plain {
				mode = "no-steps"
			}
			b.Run(name+"/"+mode, func(b *testing.B) {
				url := db(b)
				e, err := New(context.Background(), Config{DatabaseURL: url, ApplicationVersion: "bench", Agent: benchAgent, Logger: quietLogger()})
				require.NoError(b, err)
				e.plain = plain
				require.NoError(b, e.Launch())
				defer e.Shutdown(10 * time.Second)
				ctx := context.Background()
				b.ResetTimer()
				for i := range b.N {
					id := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i)
					res, err := e.Run(ctx, id, Input{Messages: []agentloop.Message{agentloop.UserMessage("go")}})
					require.NoError(b, err)
					require.NoError(b, res.Err())
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(2*benchTurns+1)), "ns/step")
			})
		}
	}
}
