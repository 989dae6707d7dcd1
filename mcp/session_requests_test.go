//lint:file-ignore SA1019 MCP deprecates sampling and logging (SEP-2577) but still supports them: these tests check that they work

package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// sessionErrs are the errors the "ask" tool met, by what it asked.
type sessionErrs struct {
	mu   sync.Mutex
	errs map[string]error
}

func (s *sessionErrs) set(what string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs[what] = err
}

func (s *sessionErrs) get(what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs[what]
}

// askTool is a resolver whose tool "ask" logs, samples and elicits through
// its call's session, and answers with what it got.
func askTool(errs *sessionErrs) *llmtoolkittest.Fake {
	f := &llmtoolkittest.Fake{}
	f.Add(llmtoolkit.MustTool("ask", "Asks its client.", map[string]any{"type": "object"}),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			var out []string
			for _, msg := range []string{"one", "two"} {
				errs.set("log", Log(ctx, "info", "ask", msg))
			}
			errs.set("debug", Log(ctx, "debug", "ask", "below the level"))
			sampled, err := CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "say hi"}}}})
			errs.set("sample", err)
			if err == nil {
				out = append(out, "sampled "+sampled.Content.(*sdk.TextContent).Text)
			}
			elicited, err := Elicit(ctx, &sdk.ElicitParams{Message: "your name?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
			errs.set("elicit", err)
			if err == nil {
				out = append(out, fmt.Sprintf("elicited %s %v", elicited.Action, elicited.Content["name"]))
			}
			return strings.Join(out, "; "), nil
		})
	return f
}

// TestToolReachesItsClientOverALegacySession: a tool served by Handler to
// a legacy client (the official Go SDK's, over HTTP with a session) sends
// it log messages at the level it set, asks it to sample and asks its user
// for input, and the client's handlers answer.
func TestToolReachesItsClientOverALegacySession(t *testing.T) {
	t.Parallel()
	errs := &sessionErrs{errs: map[string]error{}}
	srv := httptest.NewServer(Handler(askTool(errs)))
	t.Cleanup(srv.Close)

	var mu sync.Mutex
	var logs []string
	cs := sdkSession(t, srv.URL, "2025-11-25", &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			logs = append(logs, fmt.Sprintf("%s %s %v", req.Params.Level, req.Params.Logger, req.Params.Data))
		},
		CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Role: "assistant", Model: "m",
				Content: &sdk.TextContent{Text: "hi, to " + req.Params.Messages[0].Content.(*sdk.TextContent).Text}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada (asked " + req.Params.Message + ")"}}, nil
		},
	})
	ctx := testContext(t)
	require.NoError(t, cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}))

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Equal(t, "sampled hi, to say hi; elicited accept Ada (asked your name?)", res.Content[0].(*sdk.TextContent).Text)
	for _, what := range []string{"log", "debug", "sample", "elicit"} {
		assert.NoError(t, errs.get(what), what)
	}
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(logs) == 2
	}, 10*time.Second, 10*time.Millisecond)
	mu.Lock()
	assert.Equal(t, []string{"info ask one", "info ask two"}, logs, "the debug message is below the client's level")
	mu.Unlock()
}

// TestToolSessionRequestsWithoutASession: where the call has no session
// to ask on (the current protocol, a legacy client served WithStateless)
// Elicit and CreateMessage return ErrNoSession; a legacy client that did
// not declare the capability gets the protocol's missing-capability
// error; outside a served call all three return ErrNotServed.
func TestToolSessionRequestsWithoutASession(t *testing.T) {
	t.Parallel()
	answers := &sdk.ClientOptions{
		CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Role: "assistant", Content: &sdk.TextContent{Text: "hi"}}, nil
		},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	}
	for _, tc := range []struct {
		name    string
		version string
		client  *sdk.ClientOptions
		opts    []Option
		want    error
	}{
		{"current protocol", CurrentProtocolVersion, answers, nil, ErrNoSession},
		{"legacy, stateless", "2025-11-25", answers, []Option{WithStateless()}, ErrNoSession},
		{"legacy, no capability", "2025-11-25", nil, nil, ErrMissingClientCapability},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := &sessionErrs{errs: map[string]error{}}
			srv := httptest.NewServer(Handler(askTool(errs), tc.opts...))
			t.Cleanup(srv.Close)
			cs := sdkSession(t, srv.URL, tc.version, tc.client)
			res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "ask", Arguments: map[string]any{}})
			require.NoError(t, err)
			require.False(t, res.IsError)
			assert.ErrorIs(t, errs.get("sample"), tc.want)
			assert.ErrorIs(t, errs.get("elicit"), tc.want)
			assert.NoError(t, errs.get("log"), "a log message goes where the client asked for it, or nowhere")
		})
	}
	t.Run("not served", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t)
		assert.ErrorIs(t, Log(ctx, "info", "", "x"), ErrNotServed)
		_, err := Elicit(ctx, &sdk.ElicitParams{Message: "?"})
		assert.ErrorIs(t, err, ErrNotServed)
		_, err = CreateMessage(ctx, &sdk.CreateMessageParams{})
		assert.ErrorIs(t, err, ErrNotServed)
		assert.False(t, errors.Is(ErrNotServed, ErrNoSession))
	})
}

// TestToolLogsOnTheCurrentProtocol: on the current protocol a tool's log
// messages reach the client on the call's answer when the request asks
// for a level in its _meta, and none is sent when it does not.
func TestToolLogsOnTheCurrentProtocol(t *testing.T) {
	t.Parallel()
	errs := &sessionErrs{errs: map[string]error{}}
	srv := httptest.NewServer(Handler(askTool(errs)))
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	var logs []string
	cs := sdkSession(t, srv.URL, CurrentProtocolVersion, &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			logs = append(logs, fmt.Sprint(req.Params.Data))
		},
	})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(logs)
	}
	_, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.NoError(t, errs.get("log"))
	assert.Zero(t, count(), "no level asked: no log message")

	_, err = cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "ask", Arguments: map[string]any{},
		Meta: sdk.Meta{sdk.MetaKeyLogLevel: "info"}})
	require.NoError(t, err)
	require.NoError(t, errs.get("log"))
	assert.Eventually(t, func() bool { return count() == 2 }, 10*time.Second, 10*time.Millisecond)
	mu.Lock()
	assert.Equal(t, []string{"one", "two"}, logs)
	mu.Unlock()
}

// TestToolElicitEndsWithItsCall: a client whose user never answers does
// not hold the tool: when the client cancels the call, Elicit returns.
func TestToolElicitEndsWithItsCall(t *testing.T) {
	t.Parallel()
	errs := &sessionErrs{errs: map[string]error{}}
	done := make(chan struct{})
	f := &llmtoolkittest.Fake{}
	f.Add(llmtoolkit.MustTool("wait", "Asks a user who never answers.", map[string]any{"type": "object"}),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			defer close(done)
			_, err := Elicit(ctx, &sdk.ElicitParams{Message: "?", RequestedSchema: map[string]any{"type": "object"}})
			errs.set("elicit", err)
			return "", err
		})
	srv := httptest.NewServer(Handler(f))
	t.Cleanup(srv.Close)
	asked, release := make(chan struct{}), make(chan struct{})
	cs := sdkSession(t, srv.URL, "2025-11-25", &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			close(asked)
			select { // the user never answers
			case <-ctx.Done():
			case <-release:
			}
			return nil, errors.New("no answer")
		},
	})
	t.Cleanup(func() { close(release) }) // before the session closes
	ctx, cancel := context.WithCancel(testContext(t))
	go func() {
		<-asked
		cancel()
	}()
	_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "wait", Arguments: map[string]any{}})
	require.Error(t, err)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Elicit outlived its cancelled call")
	}
	assert.ErrorIs(t, errs.get("elicit"), context.Canceled)
}
