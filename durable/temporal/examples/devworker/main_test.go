package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	lltemporal "github.com/llmtoolkit/llmtoolkit/durable/temporal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestDevWorker runs the example against the Temporal server at
// LLMTOOLKIT_TEST_TEMPORAL_ADDR (say localhost:7233, after `temporal
// server start-dev`); without it, it is skipped.
func TestDevWorker(t *testing.T) {
	addr := os.Getenv("LLMTOOLKIT_TEST_TEMPORAL_ADDR")
	if addr == "" {
		t.Skip("set LLMTOOLKIT_TEST_TEMPORAL_ADDR=localhost:7233 (after `temporal server start-dev`) to run against a Temporal server")
	}
	ns := os.Getenv("LLMTOOLKIT_TEST_TEMPORAL_NAMESPACE")
	if ns == "" {
		ns = "default"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	id := fmt.Sprintf("devworker-test-%d", time.Now().UnixNano())
	require.NoError(t, run(ctx, &out, addr, ns, id))
	assert.Contains(t, out.String(), "approving deploy(map[env:staging]) [call call_deploy_1, iteration 1]")
	assert.Contains(t, out.String(), "assistant Done: deployed to staging")

	// The server's history of the run replays on the workflow as it is:
	// the worker is deterministic, signals and all.
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: ns})
	require.NoError(t, err)
	defer c.Close()
	h := &historypb.History{}
	iter := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, e)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(lltemporal.Workflow, workflow.RegisterOptions{Name: lltemporal.WorkflowName})
	require.NoError(t, r.ReplayWorkflowHistory(nil, h))
}
