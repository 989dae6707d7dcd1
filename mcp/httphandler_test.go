package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sdkSession connects the official Go SDK's client to url at version
// ("" for its newest).
func sdkSession(t testing.TB, url, version string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := c.Connect(testContext(t), &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callEcho(t testing.TB, cs *sdk.ClientSession, text string) {
	t.Helper()
	res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Equal(t, text, res.Content[0].(*sdk.TextContent).Text)
}

// TestHandlerSpeaksEveryProtocolVersion: the official client of the
// current protocol is served with no option, without a session, and so
// are legacy clients of each earlier version, in a session; mcp.Connect
// speaks the current protocol too.
func TestHandlerSpeaksEveryProtocolVersion(t *testing.T) {
	srv := httptest.NewServer(Handler(fixture(t)))
	t.Cleanup(srv.Close)
	for _, version := range []string{"", CurrentProtocolVersion, "2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run("version="+version, func(t *testing.T) {
			cs := sdkSession(t, srv.URL, version, nil)
			want := version
			if want == "" {
				want = CurrentProtocolVersion
			}
			assert.Equal(t, want, cs.InitializeResult().ProtocolVersion)
			if want == CurrentProtocolVersion {
				assert.Empty(t, cs.ID(), "the current protocol holds no session")
			} else {
				assert.NotEmpty(t, cs.ID(), "a legacy client gets a session")
			}
			callEcho(t, cs, "hi "+want)
		})
	}
	t.Run("Connect", func(t *testing.T) {
		c, err := Connect(testContext(t), HTTPTransport(srv.URL, nil))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		assert.Equal(t, CurrentProtocolVersion, c.Session().InitializeResult().ProtocolVersion)
		out, err := c.Resolve(testContext(t), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "x"}})
		require.NoError(t, err)
		assert.Equal(t, "x", out)
	})
}

// TestHandlerStatelessServesLegacyClientsWithoutSessions: with
// WithStateless a legacy client gets no session, so two handlers (two
// replicas) taking turns answer it.
func TestHandlerStatelessServesLegacyClientsWithoutSessions(t *testing.T) {
	var turn int
	var mu sync.Mutex
	replicas := []http.Handler{Handler(fixture(t), WithStateless()), Handler(fixture(t), WithStateless())}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := replicas[turn%2]
		turn++
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cs := sdkSession(t, srv.URL, "2025-11-25", nil)
	assert.Empty(t, cs.ID())
	for i := range 6 {
		callEcho(t, cs, strings.Repeat("x", i+1))
	}
}

// TestHandlerShutdown: a replica asked to stop finishes the call in
// flight, answers new requests 503 with a Retry-After, and returns when
// the call is done; a call that does not finish in time makes Shutdown
// return ErrShutdown when its context ends.
func TestHandlerShutdown(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	f := fixture(t)
	f.Add(llmtoolkit.MustTool("slow", "Waits.", map[string]any{"type": "object"}),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			close(started)
			select {
			case <-release:
				return "done", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
	h := Handler(f, WithRetryAfter(3*time.Second))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cs := sdkSession(t, srv.URL, "", nil)

	result := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		assert.NoError(t, err)
		result <- res
	}()
	<-started
	shut := make(chan error, 1)
	go func() { shut <- h.Shutdown(testContext(t)) }()

	require.Eventually(t, func() bool {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{}`))
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "3"
	}, 5*time.Second, 10*time.Millisecond, "new requests are refused, retriably")
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a call in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-shut)
	res := <-result
	require.False(t, res.IsError)
	assert.Equal(t, "done", res.Content[0].(*sdk.TextContent).Text)

	t.Run("bounded", func(t *testing.T) {
		started := make(chan struct{})
		g := fixture(t)
		g.Add(llmtoolkit.MustTool("stuck", "Never ends.", map[string]any{"type": "object"}),
			func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
				close(started)
				<-ctx.Done()
				return "", ctx.Err()
			})
		h := Handler(g)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		cs := sdkSession(t, srv.URL, "", nil)
		go func() {
			_, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "stuck", Arguments: map[string]any{}})
		}()
		<-started
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		require.ErrorIs(t, h.Shutdown(ctx), ErrShutdown)
		_ = cs.Close()
	})
}

// TestHandlerRoutesByMetaWithoutHeader: a request of the current protocol
// that names its version in _meta only is answered as the protocol asks
// (the header is missing), not refused as a stateful server refuses it.
func TestHandlerRoutesByMetaWithoutHeader(t *testing.T) {
	srv := httptest.NewServer(Handler(fixture(t)))
	t.Cleanup(srv.Close)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewBufferString(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	var msg struct {
		Error struct{ Code int } `json:"error"`
	}
	require.NoError(t, json.Unmarshal(data, &msg), string(data))
	assert.Equal(t, sdk.CodeHeaderMismatch, msg.Error.Code, string(data))
}

// inputFixture has a tool that asks for the user's approval before it
// acts (an input-required result), remembering what it was asked.
func inputFixture() *llmtoolkittest.Fake {
	f := newFixture()
	f.Add(llmtoolkit.MustTool("delete", "Deletes a file once the user approves.", map[string]any{
		"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}),
		func(ctx context.Context, c llmtoolkit.Call) (string, error) {
			responses, state := InputFrom(ctx)
			if r, ok := responses["approve"].(*sdk.ElicitResult); ok && r.Action == "accept" {
				return "deleted " + state, nil
			}
			if responses != nil {
				return "", llmtoolkit.Halt("the user declined")
			}
			return "", InputRequired(sdk.InputRequestMap{"approve": &sdk.ElicitParams{
				Message: "Delete " + c.Arguments["path"].(string) + "?"}}, c.Arguments["path"].(string))
		})
	return f
}

// TestInputRequired: a tool asks the user through the protocol; the
// official client answers (its elicitation handler) and calls again, on
// the current protocol (an input-required result), on a legacy one (the
// server asks over the session), and the state comes back as the tool
// left it; a state the client altered is refused before the tool runs.
func TestInputRequired(t *testing.T) {
	srv := httptest.NewServer(Handler(inputFixture()))
	t.Cleanup(srv.Close)
	var asked []string
	var mu sync.Mutex
	opts := &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, req.Params.Message)
		mu.Unlock()
		return &sdk.ElicitResult{Action: "accept"}, nil
	}}
	for _, version := range []string{CurrentProtocolVersion, "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			cs := sdkSession(t, srv.URL, version, opts)
			res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "a.txt"}})
			require.NoError(t, err)
			require.False(t, res.IsError, "%+v", res)
			assert.Equal(t, "deleted a.txt", res.Content[0].(*sdk.TextContent).Text)
		})
	}
	assert.Equal(t, []string{"Delete a.txt?", "Delete a.txt?"}, asked)

	t.Run("tampered state", func(t *testing.T) {
		cs := sdkSession(t, srv.URL, CurrentProtocolVersion, &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
		res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "a.txt"}})
		require.NoError(t, err)
		require.True(t, res.NeedsInput())
		require.NotEmpty(t, res.RequestState)
		approve := sdk.InputResponseMap{"approve": &sdk.ElicitResult{Action: "accept"}}
		for _, state := range []string{res.RequestState + "x", "YS50eHQ.AAAA", "b.txt"} {
			_, err = cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "a.txt"},
				InputResponses: approve, RequestState: state})
			require.Error(t, err, state)
			assert.Contains(t, err.Error(), "requestState")
		}
		res, err = cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "a.txt"},
			InputResponses: approve, RequestState: res.RequestState})
		require.NoError(t, err)
		assert.Equal(t, "deleted a.txt", res.Content[0].(*sdk.TextContent).Text)
	})
}

// TestServeSpeaksCurrentProtocol: over a stream (stdio's line transport,
// the SDK's in-memory one) Serve and Connect agree on the current protocol.
func TestServeSpeaksCurrentProtocol(t *testing.T) {
	memClient, memServer := sdk.NewInMemoryTransports()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	for name, ends := range map[string][2]sdk.Transport{
		"in-memory": {memServer, memClient},
		"lines":     {&sdk.IOTransport{Reader: sr, Writer: sw}, &sdk.IOTransport{Reader: cr, Writer: cw}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testContext(t))
			defer cancel()
			go func() { _ = Serve(ctx, fixture(t), ends[0]) }()
			c, err := Connect(ctx, ends[1])
			require.NoError(t, err)
			defer c.Close()
			assert.Equal(t, CurrentProtocolVersion, c.Session().InitializeResult().ProtocolVersion)
			out, err := c.Resolve(ctx, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "x"}})
			require.NoError(t, err)
			assert.Equal(t, "x", out)
		})
	}
}
