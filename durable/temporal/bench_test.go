package temporal

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

// benchTurns is the run of the benchmarks: turns turns of one tool call
// each, then the answer: 2×turns+1 steps.
func benchTurns(b *testing.B, turns int) ([]llmtoolkittest.Turn, llmtoolkit.Resolver) {
	script := make([]llmtoolkittest.Turn, 0, turns+1)
	for range turns {
		script = append(script, llmtoolkittest.CallTools(llmtoolkittest.Call("read", map[string]any{"path": "a"})))
	}
	script = append(script, llmtoolkittest.Reply("done"))
	return script, llmtoolkittest.NewFake(map[string]string{"read": "contents of a"})
}

// BenchmarkWorkflowStep measures the cost of one step (a model call or a
// tool call, each an activity with its recorded outcome) of a run in the
// SDK's in-process test environment, and, as the baseline, of the same run
// with agentloop.Run in-process. Its metric is ns/step.
func BenchmarkWorkflowStep(b *testing.B) {
	const turns = 10
	steps := float64(2*turns + 1)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.Run("temporal-testsuite", func(b *testing.B) {
		for b.Loop() {
			script, resolver := benchTurns(b, turns)
			model := llmtoolkittest.NewScriptedModel(b, script...)
			var s testsuite.WorkflowTestSuite
			s.SetLogger(tlog.NewStructuredLogger(quiet))
			env := s.NewTestWorkflowEnvironment()
			env.SetTestTimeout(time.Minute)
			if err := Register(env, &Activities{Send: model.Send, Options: agentloop.Options{Resolver: resolver, Logger: quiet}}); err != nil {
				b.Fatal(err)
			}
			env.ExecuteWorkflow(WorkflowName, RunInput{Messages: []agentloop.Message{agentloop.UserMessage("go")}, MaxIterations: turns + 1})
			var out RunOutput
			if err := env.GetWorkflowResult(&out); err != nil || out.Error() != nil {
				b.Fatal(err, out.Error())
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/steps, "ns/step")
	})
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			script, resolver := benchTurns(b, turns)
			model := llmtoolkittest.NewScriptedModel(b, script...)
			_, _, err := agentloop.Run(context.Background(), []agentloop.Message{agentloop.UserMessage("go")}, model.Send,
				agentloop.Options{Resolver: resolver, Logger: quiet, MaxIterations: turns + 1})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/steps, "ns/step")
	})
}
