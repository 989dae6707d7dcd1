package dbos_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	durable "github.com/llmtoolkit/llmtoolkit/durable/dbos"
)

// An agent whose tool sends an email, once per call: the tool keys the
// send on llmtoolkit.IdempotencyKey (run, agent, iteration and call ID; the
// call ID alone repeats across runs), so it is idempotent, as a tool run by
// a durable engine must be. A person approves
// each email (AskPerson); the host answers by run ID.
func Example() {
	dir, _ := os.MkdirTemp("", "durable")
	defer os.RemoveAll(dir)
	sent := map[string]bool{} // a real tool keeps these in its own store

	email := llmtoolkit.MustTool("send_email", "sends an email", map[string]any{
		"type": "object", "properties": map[string]any{"to": map[string]any{"type": "string"}}, "required": []any{"to"},
	})
	build := func(ctx context.Context, run durable.Run) (agentloop.SendFunc, agentloop.Options, error) {
		perms, err := agent.New(agent.Config{CanUseTool: durable.AskPerson})
		if err != nil {
			return nil, agentloop.Options{}, err
		}
		tools := llmtoolkit.Indexed(llmtoolkit.ResolverFunc(func(ctx context.Context, call llmtoolkit.Call) (string, error) {
			key := llmtoolkit.IdempotencyKey(ctx, call)
			if sent[key] {
				return "already sent", nil
			}
			sent[key] = true
			return "sent to " + call.Arguments["to"].(string), nil
		}), []llmtoolkit.Tool{email})
		model := func(ctx context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			if last := msgs[len(msgs)-1]; last.Role == agentloop.RoleTool {
				return agentloop.Response{Content: last.Content}, nil
			}
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "call-1", Name: "send_email", Arguments: map[string]any{"to": "ana@example.com"}}}}, nil
		}
		return model, agentloop.Options{Resolver: perms.Guard(tools), Logger: slog.New(slog.DiscardHandler)}, nil
	}

	ctx := context.Background()
	engine, err := durable.New(ctx, durable.Config{
		DatabaseURL: "sqlite:" + filepath.Join(dir, "runs.db"),
		Agent:       build,
		Logger:      slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := engine.Launch(); err != nil { // resumes the runs a crash interrupted
		fmt.Println(err)
		return
	}
	defer engine.Shutdown(5 * time.Second)

	if err := engine.Start(ctx, "order-42", durable.Input{Messages: []agentloop.Message{agentloop.UserMessage("tell Ana")}}); err != nil {
		fmt.Println(err)
		return
	}
	// Later, maybe in another process: a person sees the call and allows it.
	for {
		a, ok, err := engine.Pending(ctx, "order-42")
		if err != nil {
			fmt.Println(err)
			return
		}
		if ok {
			fmt.Println("waiting for:", a.Tool, a.Arguments["to"])
			if err := engine.Approve(ctx, "order-42", a.CallID, agent.Allow()); err != nil {
				fmt.Println(err)
				return
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := engine.Result(ctx, "order-42")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Response.Content, res.Err())
	// Output:
	// waiting for: send_email ana@example.com
	// sent to ana@example.com <nil>
}
