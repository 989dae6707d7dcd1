package mcp

import (
	"context"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
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
