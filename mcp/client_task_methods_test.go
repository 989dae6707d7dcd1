package mcp

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// TestClientTaskMethods: a host starts a call as a task, reads it,
// polls it to its end and cancels one by its ID, through Client alone.
func TestClientTaskMethods(t *testing.T) {
	f := newTaskFixture()
	f.Add(llmtoolkit.MustTool("now", "Answers at once, never as a task.", map[string]any{"type": "object"}),
		func(context.Context, llmtoolkit.Call) (string, error) { return "done now", nil })
	url := taskServerURL(t, f)
	ctx := testContext(t)
	c, err := Connect(ctx, HTTPTransport(url, nil), WithClientTasks())
	require.NoError(t, err)
	defer c.Close()

	t.Run("poll to completion", func(t *testing.T) {
		st, err := c.StartTask(ctx, llmtoolkit.Call{Name: "quick", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.NotEmpty(t, st.ID)
		assert.Equal(t, TaskWorking, st.Status)
		assert.Positive(t, st.PollInterval)
		assert.False(t, st.CreatedAt.IsZero())
		done, err := c.PollTask(ctx, st.ID)
		require.NoError(t, err)
		assert.Equal(t, TaskCompleted, done.Status)
		require.NotNil(t, done.Result)
		assert.Equal(t, "quick answer in task true", done.Result.Content[0].(*sdk.TextContent).Text)
		again, err := c.GetTask(ctx, st.ID)
		require.NoError(t, err)
		assert.Equal(t, TaskCompleted, again.Status)
	})

	t.Run("cancel by id", func(t *testing.T) {
		st, err := c.StartTask(ctx, llmtoolkit.Call{Name: "wait", Arguments: map[string]any{}})
		require.NoError(t, err)
		<-f.started
		got, err := c.GetTask(ctx, st.ID)
		require.NoError(t, err)
		assert.Equal(t, TaskWorking, got.Status)
		cancelled, err := c.CancelTask(ctx, st.ID)
		require.NoError(t, err)
		assert.Equal(t, TaskCancelled, cancelled.Status, "CancelTask reports the status the ack does not carry")
		require.Eventually(t, func() bool { return f.stopped.Load() >= 1 }, testTimeout, 10*time.Millisecond, "the tool's context ended")
		again, err := c.CancelTask(ctx, st.ID)
		require.NoError(t, err, "a cancel of an ended task changes nothing")
		assert.Equal(t, TaskCancelled, again.Status)
	})

	t.Run("input required stops the poll", func(t *testing.T) {
		st, err := c.StartTask(ctx, llmtoolkit.Call{Name: "ask", Arguments: map[string]any{}})
		require.NoError(t, err)
		got, err := c.PollTask(ctx, st.ID)
		require.NoError(t, err)
		assert.Equal(t, TaskInputRequired, got.Status)
		assert.Len(t, got.InputRequests, 2)
		_, err = c.CancelTask(ctx, st.ID)
		require.NoError(t, err)
	})

	t.Run("a tool without tasks answers at once", func(t *testing.T) {
		st, err := c.StartTask(ctx, llmtoolkit.Call{Name: "now", Arguments: map[string]any{}})
		require.NoError(t, err)
		assert.Empty(t, st.ID)
		assert.Equal(t, TaskCompleted, st.Status)
		assert.Equal(t, "done now", st.Result.Content[0].(*sdk.TextContent).Text)
	})

	t.Run("errors", func(t *testing.T) {
		_, err := c.GetTask(ctx, "no-such-task")
		require.ErrorIs(t, err, ErrTaskNotFound)
		_, err = c.CancelTask(ctx, "no-such-task")
		require.ErrorIs(t, err, ErrTaskNotFound)
		_, err = c.GetTask(ctx, "")
		assert.ErrorContains(t, err, "needs a task ID")
		_, err = c.StartTask(ctx, llmtoolkit.Call{Name: "absent"})
		require.ErrorIs(t, err, llmtoolkit.ErrUnknownTool)
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		st, err := c.StartTask(ctx, llmtoolkit.Call{Name: "wait", Arguments: map[string]any{}})
		require.NoError(t, err)
		<-f.started
		_, err = c.PollTask(short, st.ID)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		left, err := c.GetTask(ctx, st.ID)
		require.NoError(t, err)
		assert.Equal(t, TaskWorking, left.Status, "PollTask leaves the task running")
		_, err = c.CancelTask(ctx, st.ID)
		require.NoError(t, err)
	})

	t.Run("off without WithClientTasks", func(t *testing.T) {
		plain, err := Connect(ctx, HTTPTransport(url, nil))
		require.NoError(t, err)
		defer plain.Close()
		for _, fn := range []func() error{
			func() error { _, err := plain.GetTask(ctx, "x"); return err },
			func() error { _, err := plain.PollTask(ctx, "x"); return err },
			func() error { _, err := plain.CancelTask(ctx, "x"); return err },
			func() error { _, err := plain.StartTask(ctx, llmtoolkit.Call{Name: "quick"}); return err },
		} {
			require.ErrorIs(t, fn(), ErrClientTasksOff)
		}
	})
}
