package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// TestToolProgressReachesSDKClient: what a tool reports with
// llmtoolkit.ReportProgress reaches an official SDK client that asked for
// progress, as notifications/progress with its token.
func TestToolProgressReachesSDKClient(t *testing.T) {
	f := llmtoolkittest.NewFake(nil)
	f.Add(llmtoolkit.MustTool("slow", "Works in steps.", nil), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		llmtoolkit.ReportProgress(ctx, llmtoolkit.Progress{Progress: 1, Total: 2, Message: "half"})
		llmtoolkit.ReportProgress(ctx, llmtoolkit.Progress{Progress: 2, Total: 2, Message: "done"})
		return "finished", nil
	})
	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	client := sdk.NewClient(&sdk.Implementation{Name: "progress-client", Version: "v0"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, req.Params)
		},
	})
	cs, err := client.Connect(testContext(t), serveInMemory(t, f), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

	params := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(testContext(t), params)
	require.NoError(t, err)
	assert.Equal(t, "finished", res.Content[0].(*sdk.TextContent).Text)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 2 }, testTimeout, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "tok-1", got[0].ProgressToken)
	assert.Equal(t, []float64{1, 2}, []float64{got[0].Progress, got[1].Progress})
	assert.Equal(t, "half", got[0].Message)
	assert.Equal(t, 2.0, got[1].Total)
}

// progressCatcher is a caller's progress function that records what it
// gets and signals each report on got.
type progressCatcher struct {
	mu   sync.Mutex
	seen []llmtoolkit.Progress
	got  chan struct{}
}

func newProgressCatcher() *progressCatcher { return &progressCatcher{got: make(chan struct{}, 16)} }

func (p *progressCatcher) report(pr llmtoolkit.Progress) {
	p.mu.Lock()
	p.seen = append(p.seen, pr)
	p.mu.Unlock()
	p.got <- struct{}{}
}

func (p *progressCatcher) reports() []llmtoolkit.Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]llmtoolkit.Progress(nil), p.seen...)
}

// waitReport waits until the caller has received one more report: the
// server's tools call it between reports, so that every report is
// forwarded while the call runs.
func (p *progressCatcher) waitReport(ctx context.Context) error {
	select {
	case <-p.got:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("the caller got no progress report within 10 s")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestClientForwardsSDKServerProgress: a tool of an official SDK server
// that sends notifications/progress reaches the progress function of the
// caller of Client.Resolve (as agentloop sets it), with its numbers and
// message. Without a progress function the client asks for none, and a
// ProgressNotificationHandler passed with WithClientOptions still gets
// every notification.
func TestClientForwardsSDKServerProgress(t *testing.T) {
	t.Parallel()
	catcher := newProgressCatcher()
	var tokens []any
	srv := sdk.NewServer(&sdk.Implementation{Name: "plain-sdk", Version: "v0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "steps", Description: "Works in steps.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			token := req.Params.GetProgressToken()
			tokens = append(tokens, token)
			if token != nil {
				for i, msg := range []string{"half", "done"} {
					if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i + 1), Total: 2, Message: msg}); err != nil {
						return nil, err
					}
					if err := catcher.waitReport(ctx); err != nil {
						return nil, err
					}
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "finished"}}}, nil
		})
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(testContext(t), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	var theirs atomic.Int32
	c, err := Connect(testContext(t), ct, WithClientOptions(&sdk.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { theirs.Add(1) },
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	ctx := llmtoolkit.WithListeners(testContext(t), llmtoolkit.Listeners{Progress: catcher.report})
	out, err := c.Resolve(ctx, llmtoolkit.Call{Name: "steps"})
	require.NoError(t, err)
	assert.Equal(t, "finished", out)
	assert.Equal(t, []llmtoolkit.Progress{{Progress: 1, Total: 2, Message: "half"}, {Progress: 2, Total: 2, Message: "done"}}, catcher.reports())
	assert.EqualValues(t, 2, theirs.Load(), "the host's own handler still gets them")

	out, err = c.Resolve(testContext(t), llmtoolkit.Call{Name: "steps"})
	require.NoError(t, err)
	assert.Equal(t, "finished", out)
	require.Len(t, tokens, 2)
	assert.NotNil(t, tokens[0], "a caller with a progress function asks for progress")
	assert.Nil(t, tokens[1], "a caller without one does not")
}

// TestProgressThroughServeAndConnect: end to end through this package on
// both sides, what a tool reports with llmtoolkit.ReportProgress behind
// mcp.Serve reaches the progress function of the caller of the
// mcp.Connect client, in order, and nothing is forwarded after Resolve
// returns.
func TestProgressThroughServeAndConnect(t *testing.T) {
	t.Parallel()
	catcher := newProgressCatcher()
	f := llmtoolkittest.NewFake(nil)
	f.Add(llmtoolkit.MustTool("slow", "Works in steps.", nil), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		for i := 1; i <= 3; i++ {
			llmtoolkit.ReportProgress(ctx, llmtoolkit.Progress{Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
			if i < 3 { // the last one races with the answer: it may be dropped
				if err := catcher.waitReport(ctx); err != nil {
					return "", err
				}
			}
		}
		return "finished", nil
	})
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(testContext(t))
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, f, st) }()
	t.Cleanup(func() { cancel(); <-served })
	c, err := Connect(testContext(t), ct)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	var ended atomic.Bool
	out, err := c.Resolve(llmtoolkit.WithListeners(testContext(t), llmtoolkit.Listeners{Progress: func(p llmtoolkit.Progress) {
		assert.False(t, ended.Load(), "progress forwarded after the call returned: %+v", p)
		catcher.report(p)
	}}), llmtoolkit.Call{Name: "slow"})
	ended.Store(true)
	require.NoError(t, err)
	assert.Equal(t, "finished", out)
	got := catcher.reports()
	require.GreaterOrEqual(t, len(got), 2)
	assert.Equal(t, llmtoolkit.Progress{Progress: 1, Total: 3, Message: "step 1"}, got[0])
	assert.Equal(t, llmtoolkit.Progress{Progress: 2, Total: 3, Message: "step 2"}, got[1])
}

// TestRemoteProgressReachesAgentloop: a remote tool's progress, through
// mcp.Serve and a Client used as agentloop's Resolver, arrives among the
// run's events as EventProgress of its call, before its result.
func TestRemoteProgressReachesAgentloop(t *testing.T) {
	t.Parallel()
	seen := make(chan struct{}, 1)
	f := llmtoolkittest.NewFake(nil)
	f.Add(llmtoolkit.MustTool("slow", "Works in steps.", nil), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		llmtoolkit.ReportProgress(ctx, llmtoolkit.Progress{Progress: 1, Total: 2, Message: "half"})
		select { // the event arrived while the call runs
		case <-seen:
		case <-time.After(10 * time.Second):
			return "", errors.New("no progress event within 10 s")
		}
		return "finished", nil
	})
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(testContext(t))
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, f, st) }()
	t.Cleanup(func() { cancel(); <-served })
	c, err := Connect(testContext(t), ct)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	model := llmtoolkittest.NewScriptedModel(t, llmtoolkittest.CallTools(llmtoolkittest.Call("slow", nil)), llmtoolkittest.Reply("done"))
	var events []string
	_, _, err = agentloop.Run(testContext(t), []agentloop.Message{agentloop.UserMessage("Go.")}, model.Send, agentloop.Options{
		Resolver: c, MaxParallel: 1,
		OnEvent: func(e agentloop.Event) {
			switch e.Kind {
			case agentloop.EventProgress:
				events = append(events, fmt.Sprintf("progress %s %g/%g %s", e.Call.Name, e.Progress.Progress, e.Progress.Total, e.Progress.Message))
				seen <- struct{}{}
			case agentloop.EventToolResult:
				events = append(events, "result "+e.Result.Content)
			}
		},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"progress slow 1/2 half", "result finished"}, events)
}
