// Command devworker runs an agent as a durable Temporal workflow: a worker
// with the model and the tools, a run that waits for a person's approval
// before its deploy tool runs, and the approval, all against a Temporal
// server.
//
// Start a local development server first (it keeps its state in memory,
// serves on localhost:7233, and its web UI on http://localhost:8233, where
// the run's history shows one activity per model call and per tool call):
//
//	temporal server start-dev
//
// (the Temporal CLI: `brew install temporal`, or the release archive from
// https://github.com/temporalio/cli/releases, or
// `docker run --rm -p 7233:7233 -p 8233:8233 temporalio/temporal server start-dev --ip 0.0.0.0`).
// Then:
//
//	go run ./examples/devworker -addr localhost:7233
//
// The model here is a small deterministic function, so that the example
// needs no API key: swap in a SendFunc built on package provider. Stop the
// program while the run waits for its approval and start it again: the
// run, recorded by the server, goes on where it was (the program approves
// it on the next start), and the model is not called again for the turn
// already answered.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lltemporal "github.com/llmtoolkit/llmtoolkit/durable/temporal"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
)

func main() {
	addr := flag.String("addr", "localhost:7233", "the Temporal server's host:port")
	namespace := flag.String("namespace", "default", "the Temporal namespace")
	id := flag.String("id", "devworker-deploy", "the run's workflow ID (the same ID resumes the same run)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *addr, *namespace, *id); err != nil {
		fmt.Fprintln(os.Stderr, "devworker:", err)
		os.Exit(1)
	}
}

// queue is the task queue of the example's worker and runs.
const queue = "llmtoolkit-devworker"

// run starts a worker, starts (or joins) the run id, approves its deploy
// call, and prints the run's result.
func run(ctx context.Context, out io.Writer, addr, namespace, id string) error {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: namespace, Logger: tlog.NewStructuredLogger(quiet)})
	if err != nil {
		return fmt.Errorf("connecting to the Temporal server at %s (start one with `temporal server start-dev`): %w", addr, err)
	}
	defer c.Close()

	w := worker.New(c, queue, worker.Options{})
	deployer := &deployer{done: map[string]bool{}}
	tools := []llmtoolkit.Tool{llmtoolkit.MustTool("deploy", "Deploys the service to an environment.", map[string]any{
		"type":       "object",
		"properties": map[string]any{"env": map[string]any{"type": "string"}},
		"required":   []any{"env"},
	})}
	if err := lltemporal.Register(w, &lltemporal.Activities{
		Send:           model,
		Options:        agentloop.Options{Resolver: llmtoolkit.Indexed(llmtoolkit.ResolverFunc(deployer.resolve), tools)},
		HeartbeatEvery: 5 * time.Second,
	}); err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return fmt.Errorf("starting the worker: %w", err)
	}
	defer w.Stop()

	wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, lltemporal.WorkflowName, lltemporal.RunInput{
		Messages:         []agentloop.Message{agentloop.UserMessage("Deploy the service to staging.")},
		Approve:          []string{"deploy"},
		HeartbeatTimeout: 30 * time.Second,
	})
	if err != nil {
		return fmt.Errorf("starting the run: %w", err)
	}
	fmt.Fprintf(out, "run %s (run ID %s) on task queue %s\n", wr.GetID(), wr.GetRunID(), queue)

	// A person approves the calls the run waits for (here, the program).
	done := make(chan error, 1)
	go func() { done <- approveAll(ctx, out, c, wr) }()

	var res lltemporal.RunOutput
	if err := wr.Get(ctx, &res); err != nil {
		return fmt.Errorf("waiting for the run: %w", err)
	}
	if err := <-done; err != nil {
		return err
	}
	if err := res.Error(); err != nil {
		return fmt.Errorf("the run ended with: %w", err)
	}
	for _, m := range res.History {
		fmt.Fprintf(out, "%-9s %s", m.Role, m.Content)
		for _, call := range m.ToolCalls {
			fmt.Fprintf(out, " -> %s(%v) [call %s]", call.Name, call.Arguments, call.ID)
		}
		fmt.Fprintln(out)
	}
	return nil
}

// approveAll approves each call the run waits for, until the run ends.
func approveAll(ctx context.Context, out io.Writer, c client.Client, wr client.WorkflowRun) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("approving: panic: %v", v)
		}
	}()
	seen := map[string]bool{}
	for {
		desc, err := c.DescribeWorkflow(ctx, wr.GetID(), wr.GetRunID())
		if err != nil {
			return fmt.Errorf("describing the run: %w", err)
		}
		if desc.WorkflowCloseTime != nil {
			return nil // the run ended
		}
		pending, err := lltemporal.Pending(ctx, c, wr.GetID(), wr.GetRunID())
		if err != nil {
			pending = nil // not answering yet (its first workflow task is not done): ask again
		}
		for _, p := range pending {
			if seen[p.Call.ID] {
				continue
			}
			seen[p.Call.ID] = true
			fmt.Fprintf(out, "approving %s(%v) [call %s, iteration %d]\n", p.Call.Name, p.Call.Arguments, p.Call.ID, p.Iteration)
			if err := lltemporal.Approve(ctx, c, wr.GetID(), wr.GetRunID(), lltemporal.Approval{CallID: p.Call.ID, Approved: true, By: "devworker"}); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// model stands in for a real model: it asks to deploy to staging, then
// reports the tool's answer.
func model(_ context.Context, messages []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
	last := messages[len(messages)-1]
	if last.Role == agentloop.RoleTool {
		return agentloop.Response{Content: "Done: " + last.Content, StopReason: "stop"}, nil
	}
	return agentloop.Response{StopReason: "tool_calls", ToolCalls: []llmtoolkit.Call{
		{ID: "call_deploy_1", Name: "deploy", Arguments: map[string]any{"env": "staging"}},
	}}, nil
}

// deployer is the side-effecting tool. It is idempotent: a call it has
// done (a retried attempt of the same call of the same run) is not done
// again. Its key is llmtoolkit.IdempotencyKey: the run (the workflow ID),
// the iteration and the call ID. A real one keeps the keys where it keeps
// its deployments.
type deployer struct {
	mu   sync.Mutex
	done map[string]bool
}

func (d *deployer) resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	key := llmtoolkit.IdempotencyKey(ctx, call)
	d.mu.Lock()
	defer d.mu.Unlock()
	env, _ := call.Arguments["env"].(string)
	if d.done[key] {
		return fmt.Sprintf("%s was already deployed by this call (%s)", env, key), nil
	}
	d.done[key] = true
	return fmt.Sprintf("deployed to %s", env), nil
}
