package agentloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// memoryEngine is the essence of a durable engine: it records each step's
// outcome as JSON under the step's key, and returns the recorded outcome
// instead of running a step again. A real engine (package durable/dbos,
// durable/temporal) keeps the journal in a database that outlives the
// process.
type memoryEngine struct {
	journal map[string][]byte
}

func (e *memoryEngine) Model(ctx context.Context, step agentloop.ModelStep, call func(context.Context) (agentloop.Response, error)) (agentloop.Response, error) {
	key := fmt.Sprintf("model/%d", step.Iteration)
	if b, ok := e.journal[key]; ok {
		var o agentloop.ModelOutcome
		if err := json.Unmarshal(b, &o); err != nil {
			return agentloop.Response{}, err
		}
		return o.Unpack()
	}
	resp, err := call(ctx)
	b, jerr := json.Marshal(agentloop.EncodeModel(resp, err))
	if jerr != nil {
		return agentloop.Response{}, jerr // the engine failed: the run ends with an *ExecutorError
	}
	e.journal[key] = b
	return resp, err
}

func (e *memoryEngine) Tools(ctx context.Context, step agentloop.ToolsStep, run func(context.Context, int) llmtoolkit.Result) ([]llmtoolkit.Result, error) {
	results := make([]llmtoolkit.Result, len(step.Calls))
	for i, call := range step.Calls {
		key := fmt.Sprintf("tool/%d/%d/%s", step.Iteration, i, call.ID)
		if b, ok := e.journal[key]; ok {
			var o agentloop.ToolOutcome
			if err := json.Unmarshal(b, &o); err != nil {
				return nil, err
			}
			results[i] = o.Result()
			continue
		}
		results[i] = run(ctx, i)
		b, err := json.Marshal(agentloop.EncodeResult(results[i]))
		if err != nil {
			return nil, err
		}
		e.journal[key] = b
	}
	return results, nil
}

// A run through an Executor that records each step, then the same run
// again, as after a restart: the recorded steps are replayed, so the model
// is not called again and the email is not sent twice. Then a restart
// after a crash in the middle of the tool call: the call runs again. The tool also keys
// what it did by llmtoolkit.IdempotencyKey (the run, the iteration, the
// call ID), for a step that is interrupted and run again.
func ExampleExecutor() {
	sent := map[string]bool{} // the mail server's view, by idempotency key
	email := llmtoolkit.MustTool("send_email", "Sends an email.", map[string]any{"type": "object"})
	tools := (&llmtoolkittest.Fake{}).Add(email, func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		key := llmtoolkit.IdempotencyKey(ctx, call)
		if sent[key] {
			return "already sent", nil
		}
		sent[key] = true
		return "sent", nil
	})
	modelCalls := 0
	model := func(ctx context.Context, messages []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
		modelCalls++
		return exampleModel(ctx, messages, tools)
	}
	engine := &memoryEngine{journal: map[string][]byte{}}
	opts := agentloop.Options{Resolver: tools, Executor: engine, Logger: slog.New(slog.DiscardHandler)}
	prompt := []agentloop.Message{agentloop.UserMessage("please send it")}
	ctx := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.RunID = "order-42" }) // the run's identity, the same when it resumes

	resp, _, err := agentloop.Run(ctx, prompt, model, opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("%s (emails: %d, model calls: %d, steps recorded: %d)\n", resp.Content, len(sent), modelCalls, len(engine.journal))

	resp, history, err := agentloop.Run(ctx, prompt, model, opts) // resumed
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("%s (emails: %d, model calls: %d, messages: %d)\n", resp.Content, len(sent), modelCalls, len(history))

	// The process died while the email was being sent: the call's outcome
	// was never recorded, nor anything after it. The call runs again, with
	// the same key.
	delete(engine.journal, "tool/1/0/call_1")
	delete(engine.journal, "model/2")
	resp, _, err = agentloop.Run(ctx, prompt, model, opts)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("%s (emails: %d, model calls: %d)\n", resp.Content, len(sent), modelCalls)
	// Output:
	// The tool says: sent (emails: 1, model calls: 2, steps recorded: 3)
	// The tool says: sent (emails: 1, model calls: 2, messages: 4)
	// The tool says: already sent (emails: 1, model calls: 3)
}

// ExampleToolFingerprint: a durable engine records the fingerprint of a
// run's tools when it starts, and refuses to go on with another.
func ExampleToolFingerprint() {
	v1 := llmtoolkit.MustTool("append", "Appends a line.", map[string]any{"type": "object", "properties": map[string]any{"line": map[string]any{"type": "string"}}})
	v2 := llmtoolkit.MustTool("append", "Appends a line, now faster.", map[string]any{"type": "object", "properties": map[string]any{"line": map[string]any{"type": "string"}}})
	v3 := llmtoolkit.MustTool("append", "Appends a line.", map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}})
	a, _ := agentloop.ToolFingerprint(v1)
	b, _ := agentloop.ToolFingerprint(v2)
	c, _ := agentloop.ToolFingerprint(v3)
	fmt.Println(a == b, a == c)
	// Output: true false
}
