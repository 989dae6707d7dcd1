package mcp

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// approvalServer is an agent-guarded resolver served over MCP whose
// host asks the MCP client's user with Approval, recording inside the
// guard to a SQLite database; runs counts what the tools did.
type approvalServer struct {
	db   *gorm.DB
	runs atomic.Int64
	r    llmtoolkit.Resolver
}

func newApprovalServer(t *testing.T) *approvalServer {
	t.Helper()
	a := &approvalServer{}
	f := &llmtoolkittest.Fake{}
	pathArg := map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}
	f.Add(llmtoolkit.MustTool("delete", "Deletes a file.", pathArg), func(_ context.Context, c llmtoolkit.Call) (string, error) {
		a.runs.Add(1)
		return "deleted " + c.Arguments["path"].(string), nil
	})
	// rename needs the approval, then asks for the new name itself.
	f.Add(llmtoolkit.MustTool("rename", "Renames a file, asking the new name.", pathArg), func(ctx context.Context, c llmtoolkit.Call) (string, error) {
		responses, state := InputFrom(ctx)
		if _, asked := responses[ApprovalRequestID]; asked {
			return "", errors.New("the tool read the approval's answer")
		}
		if r, ok := responses["name"].(*sdk.ElicitResult); ok && r.Action == "accept" && state == "asked-name" {
			a.runs.Add(1)
			return "renamed " + c.Arguments["path"].(string) + " to " + r.Content["name"].(string), nil
		}
		return "", InputRequired(sdk.InputRequestMap{"name": &sdk.ElicitParams{Message: "New name?"}}, "asked-name")
	})
	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	a.db = db
	rec := trace.Record(f, db, trace.WithDefaultConversation(uuid.NewString(), uuid.NewString()), trace.WithStrict())
	t.Cleanup(func() { _ = rec.Close() })
	perms, err := agent.New(agent.Config{CanUseTool: func(ctx context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
		ok, err := Approval(ctx, call)
		switch {
		case errors.Is(err, ErrNotServed):
			return agent.Deny("no one to ask")
		case err != nil:
			return agent.Pending(err)
		case !ok:
			return agent.Deny("the user refused this call")
		}
		return agent.Allow()
	}})
	require.NoError(t, err)
	a.r = perms.Guard(rec)
	return a
}

// rows counts the traces of tool by result type.
func (a *approvalServer) rows(t *testing.T, tool string) map[string]int {
	t.Helper()
	var rows []struct {
		ResultType string
		N          int
	}
	require.NoError(t, a.db.Raw(`SELECT result_type, count(*) AS n FROM tool_traces WHERE tool_name = ? GROUP BY 1`, tool).Scan(&rows).Error)
	out := map[string]int{}
	for _, r := range rows {
		out[r.ResultType] = r.N
	}
	return out
}

func text(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	require.NotEmpty(t, res.Content)
	tc, ok := res.Content[0].(*sdk.TextContent)
	require.True(t, ok, "%T", res.Content[0])
	return tc.Text
}

// TestApprovalOverMCP: an agent-guarded resolver served over MCP asks
// the official client's user for each call through an input-required
// result (Approval, agent.Pending); the client's elicitation handler
// answers. Approved, the call runs and is traced once; declined, it is
// refused and nothing runs; on the current protocol and on a legacy one
// (asked over its session).
func TestApprovalOverMCP(t *testing.T) {
	for _, version := range []string{CurrentProtocolVersion, "2025-11-25"} {
		for _, answer := range []string{"accept", "decline"} {
			t.Run(version+"/"+answer, func(t *testing.T) {
				a := newApprovalServer(t)
				srv := httptest.NewServer(Handler(a.r))
				t.Cleanup(srv.Close)
				var mu sync.Mutex
				var asked []string
				cs := sdkSession(t, srv.URL, version, &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params.Message)
					mu.Unlock()
					return &sdk.ElicitResult{Action: answer}, nil
				}})
				res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "a.txt"}})
				require.NoError(t, err)
				require.Len(t, asked, 1)
				assert.Contains(t, asked[0], `"delete"`)
				assert.Contains(t, asked[0], `{"path":"a.txt"}`)
				if answer == "accept" {
					require.False(t, res.IsError, "%+v", res)
					assert.Equal(t, "deleted a.txt", text(t, res))
					assert.Equal(t, int64(1), a.runs.Load())
					assert.Equal(t, map[string]int{trace.ResultOK: 1}, a.rows(t, "delete"), "traced once")
					return
				}
				require.True(t, res.IsError, "%+v", res)
				assert.Contains(t, text(t, res), "the user refused this call")
				assert.Zero(t, a.runs.Load(), "nothing runs")
				assert.Equal(t, map[string]int{trace.ResultError: 1}, a.rows(t, "delete"), "the refusal, once")
			})
		}
	}
}

// TestApprovalStateless: two replicas that share nothing but the key
// of the requestState: the approval is asked by one and its answer read
// by the other. The answer is bound to the call (another path is asked
// again), and a state the client altered is refused before anything
// runs. A call approved then asking for input itself keeps its approval.
func TestApprovalStateless(t *testing.T) {
	key := []byte("a key shared by the replicas....")
	a := newApprovalServer(t)
	one := httptest.NewServer(Handler(a.r, WithStateless(), WithRequestStateKey(key)))
	t.Cleanup(one.Close)
	two := httptest.NewServer(Handler(a.r, WithStateless(), WithRequestStateKey(key)))
	t.Cleanup(two.Close)
	// The client declares elicitation and answers by hand.
	manual := &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return nil, errors.New("answered by hand")
		}}
	cs1 := sdkSession(t, one.URL, CurrentProtocolVersion, manual)
	cs2 := sdkSession(t, two.URL, CurrentProtocolVersion, manual)
	accept := sdk.InputResponseMap{ApprovalRequestID: &sdk.ElicitResult{Action: "accept"}}
	args := map[string]any{"path": "a.txt"}

	first, err := cs1.CallTool(testContext(t), &sdk.CallToolParams{Name: "delete", Arguments: args})
	require.NoError(t, err)
	require.True(t, first.NeedsInput(), "%+v", first)
	require.Contains(t, first.InputRequests, ApprovalRequestID)

	t.Run("tampered state", func(t *testing.T) {
		for _, state := range []string{first.RequestState + "x", "e30.AAAA", ""} {
			res, err := cs2.CallTool(testContext(t), &sdk.CallToolParams{Name: "delete", Arguments: args,
				InputResponses: accept, RequestState: state})
			if state == "" { // no state: a first call, asked again
				require.NoError(t, err)
				assert.True(t, res.NeedsInput())
				continue
			}
			require.Error(t, err, state)
			assert.Contains(t, err.Error(), "requestState")
		}
		assert.Zero(t, a.runs.Load())
	})
	t.Run("another call", func(t *testing.T) {
		res, err := cs2.CallTool(testContext(t), &sdk.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "b.txt"},
			InputResponses: accept, RequestState: first.RequestState})
		require.NoError(t, err)
		assert.True(t, res.NeedsInput(), "the approval of a.txt does not approve b.txt")
		assert.Zero(t, a.runs.Load())
	})
	t.Run("approved on the other replica", func(t *testing.T) {
		res, err := cs2.CallTool(testContext(t), &sdk.CallToolParams{Name: "delete", Arguments: args,
			InputResponses: accept, RequestState: first.RequestState})
		require.NoError(t, err)
		require.False(t, res.NeedsInput())
		assert.Equal(t, "deleted a.txt", text(t, res))
		assert.Equal(t, int64(1), a.runs.Load())
		assert.Equal(t, map[string]int{trace.ResultOK: 1}, a.rows(t, "delete"), "traced once")
	})
	t.Run("approved, then the tool asks", func(t *testing.T) {
		ctx := testContext(t)
		res, err := cs1.CallTool(ctx, &sdk.CallToolParams{Name: "rename", Arguments: args})
		require.NoError(t, err)
		require.Contains(t, res.InputRequests, ApprovalRequestID)
		res, err = cs2.CallTool(ctx, &sdk.CallToolParams{Name: "rename", Arguments: args, InputResponses: accept, RequestState: res.RequestState})
		require.NoError(t, err)
		require.Contains(t, res.InputRequests, "name", "approved: the tool runs and asks its own question")
		res, err = cs1.CallTool(ctx, &sdk.CallToolParams{Name: "rename", Arguments: args, RequestState: res.RequestState,
			InputResponses: sdk.InputResponseMap{"name": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "b.txt"}}}})
		require.NoError(t, err)
		require.False(t, res.NeedsInput(), "the approval is kept: not asked again")
		assert.Equal(t, "renamed a.txt to b.txt", text(t, res))
		// (The tool's own input-required round is recorded by the
		// Recorder as an error of the tool, as for any tool that asks.)
		assert.Equal(t, 1, a.rows(t, "rename")[trace.ResultOK])
	})
}

// TestApprovalNeedsElicitation: a client that did not declare
// elicitation is not asked a question it cannot answer: it receives the
// protocol's missing-capability error, and nothing runs.
func TestApprovalNeedsElicitation(t *testing.T) {
	a := newApprovalServer(t)
	srv := httptest.NewServer(Handler(a.r))
	t.Cleanup(srv.Close)
	cs := sdkSession(t, srv.URL, CurrentProtocolVersion, nil)
	_, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "a.txt"}})
	var rpcErr *jsonrpc.Error
	require.ErrorAs(t, err, &rpcErr)
	assert.EqualValues(t, sdk.CodeMissingRequiredClientCapabilities, rpcErr.Code)
	assert.Zero(t, a.runs.Load())
	assert.Empty(t, a.rows(t, "delete"), "not run, not refused: nothing recorded")
}
