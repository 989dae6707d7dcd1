package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serverEnv makes the test binary serve over stdio, for the tests that
// run a server as a process: "1" serves the fixture, "hostile" the
// hostile fixture, "parts" the parts fixture.
const serverEnv = "LLMTOOLKIT_MCP_TEST_SERVE_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(replicaEnv) != "" {
		if err := runReplica(); err != nil {
			fmt.Fprintln(os.Stderr, "replica:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	var serve llmtoolkit.Resolver
	switch os.Getenv(serverEnv) {
	case "1":
		serve = newFixture()
	case "hostile":
		serve = newHostileFixture()
	case "parts":
		serve = partsFixture()
	}
	if serve != nil {
		if err := Serve(context.Background(), serve, &sdk.StdioTransport{}, WithName("subprocess")); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The fixture's panicking tool logs its stack through slog: keep the
	// test output readable.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

func TestClientListsRemoteTools(t *testing.T) {
	t.Parallel()
	c := ourClient(t, fixture(t), WithName("fixture"))
	assert.Equal(t, "fixture", c.Server())

	tools := c.Tools()
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Name
		require.NoError(t, tl.Validate())
		assert.Equal(t, map[string]any{"server": "fixture"}, tl.Metadata, "the server's name, for toolsearch's server field")
	}
	assert.ElementsMatch(t, []string{"echo", "fail", "show", "boom"}, names)

	echo, ok := c.LookupTool("echo")
	require.True(t, ok)
	assert.Equal(t, "Echoes the text.", echo.Description)
	assert.JSONEq(t, mustJSON(t, echoSchema), mustJSON(t, echo.Parameters))
	assert.Equal(t, &llmtoolkit.Annotations{ReadOnly: true, Idempotent: true}, echo.Annotations, "false hints kept as false")

	fail, _ := c.LookupTool("fail")
	assert.Equal(t, &llmtoolkit.Annotations{Destructive: true, OpenWorld: true}, fail.Annotations)
	show, _ := c.LookupTool("show")
	assert.Nil(t, show.Annotations)

	_, ok = c.LookupTool("nope")
	assert.False(t, ok)
}

func TestClientExecute(t *testing.T) {
	t.Parallel()
	local := fixture(t)
	c := ourClient(t, local)
	tests := []struct {
		name        string
		call        llmtoolkit.Call
		wantContent string
		wantError   bool
		wantErrIs   error
		wantDisplay *llmtoolkit.Display
		reaches     bool // whether the call reaches the remote resolver
	}{
		{name: "success", call: llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "hi", "times": 2}},
			wantContent: "hi", reaches: true},
		{name: "remote error", call: llmtoolkit.Call{Name: "fail"},
			wantContent: "disk full: free some space and retry", wantError: true, wantErrIs: ErrRemoteTool, reaches: true},
		{name: "remote panic", call: llmtoolkit.Call{Name: "boom"},
			wantContent: "tool execution failed: kaboom", wantError: true, wantErrIs: ErrRemoteTool},
		{name: "display comes back", call: llmtoolkit.Call{Name: "show"}, wantContent: "shown", reaches: true,
			wantDisplay: &llmtoolkit.Display{Kind: "diff", Payload: map[string]any{"path": "a.txt", "added": float64(2)}}},
		{name: "validated locally", call: llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": 3}},
			wantContent: `invalid arguments for tool "echo": /text: expected string, but got number`,
			wantError:   true, wantErrIs: llmtoolkit.ErrInvalidArguments},
		{name: "unknown tool", call: llmtoolkit.Call{Name: "nope"},
			wantContent: `unknown tool: "nope". Available tools: boom, echo, fail, show`,
			wantError:   true, wantErrIs: llmtoolkit.ErrUnknownTool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			local.Reset()
			res := llmtoolkit.Execute(testContext(t), c, tt.call)
			assert.Equal(t, tt.wantContent, res.Content)
			assert.Equal(t, tt.wantError, res.IsError)
			if tt.wantErrIs != nil {
				assert.ErrorIs(t, res.Err, tt.wantErrIs)
			}
			assert.Equal(t, tt.wantDisplay, res.Display)
			if tt.reaches {
				assert.Len(t, local.CallsTo(tt.call.Name), 1)
			} else if tt.call.Name != "boom" {
				assert.Empty(t, local.CallsTo(tt.call.Name))
			}
		})
	}
}

func TestClientResolveErrors(t *testing.T) {
	t.Parallel()
	c := ourClient(t, fixture(t))
	ctx := testContext(t)

	_, err := c.Resolve(ctx, llmtoolkit.Call{Name: "fail"})
	var te *ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "fail", te.Tool)
	assert.Equal(t, "disk full: free some space and retry", te.Error())

	_, err = c.Resolve(ctx, llmtoolkit.Call{Name: "missing"})
	require.ErrorIs(t, err, llmtoolkit.ErrUnknownTool)
	assert.Contains(t, err.Error(), "missing")

	require.NoError(t, c.Close())
	_, err = c.Resolve(ctx, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.Error(t, err, "a closed session cannot call")
	assert.Contains(t, err.Error(), `calling tool "echo"`)
}

func TestClientComposesWithLocalTools(t *testing.T) {
	t.Parallel()
	remote := fixture(t)
	c := ourClient(t, remote)
	local := llmtoolkittest.NewFake(map[string]string{"echo": "local echo", "local_only": "local answer"})
	r := llmtoolkit.Compose(c, local)

	names := make([]string, 0, len(r.Tools()))
	for _, tl := range r.Tools() {
		names = append(names, tl.Name)
	}
	// The SDK lists tools by name; Compose keeps resolver order.
	assert.Equal(t, []string{"boom", "echo", "fail", "show", "local_only"}, names)

	ctx := testContext(t)
	res := llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "remote wins"}})
	assert.Equal(t, "remote wins", res.Content, "the first resolver listing a name wins")
	res = llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: "local_only"})
	assert.Equal(t, "local answer", res.Content)
	assert.Empty(t, local.CallsTo("echo"))
	assert.Len(t, remote.CallsTo("echo"), 1)

	res = llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: "ghost"})
	assert.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrUnknownTool)
}

func TestClientConcurrentCalls(t *testing.T) {
	t.Parallel()
	remote := fixture(t)
	c := ourClient(t, remote)
	ctx := testContext(t)
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			want := fmt.Sprint("call ", i)
			out, err := c.Resolve(ctx, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": want}})
			if err == nil && out != want {
				err = fmt.Errorf("got %q, want %q", out, want)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Len(t, remote.CallsTo("echo"), n)
}

func TestClientCancellation(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	stopped := make(chan error, 1)
	remote := (&llmtoolkittest.Fake{}).Handle("wait", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return "", ctx.Err()
	})
	c := ourClient(t, remote)

	ctx, cancel := context.WithCancel(testContext(t))
	go func() {
		<-started
		cancel()
	}()
	res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "wait"})
	assert.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, context.Canceled)
	assert.Contains(t, res.Content, "cancelled")
	select {
	case err := <-stopped:
		assert.ErrorIs(t, err, context.Canceled, "the remote tool sees the cancellation")
	case <-testContext(t).Done():
		t.Fatal("the remote tool was not cancelled")
	}
}

// The client against a server written directly with the SDK, so that the
// two sides of this package are not only tested against each other.
type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

func sdkServer(t *testing.T) *sdk.Server {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "plain-sdk", Version: "v0"}, &sdk.ServerOptions{PageSize: 2})
	sdk.AddTool(srv, &sdk.Tool{Name: "greet", Description: "Greets someone.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in greetIn) (*sdk.CallToolResult, greetOut, error) {
			if in.Name == "" {
				return nil, greetOut{}, errors.New("name is empty: say who to greet")
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Hello, " + in.Name + "!"}}},
				greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	empty := map[string]any{"type": "object"}
	srv.AddTool(&sdk.Tool{Name: "picture", Description: "Returns a picture and a caption.", InputSchema: empty},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a red dot"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
				&sdk.ResourceLink{URI: "file:///dot.png", Name: "dot", MIMEType: "image/png"},
			}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "untitled", InputSchema: empty, Title: "An untitled tool"},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "dotted.name", Description: "A name providers reject.", InputSchema: empty},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil })
	srv.AddTool(&sdk.Tool{Name: "broken_schema", Description: "A schema that does not compile.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "nonsense"}}}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil })
	srv.AddTool(&sdk.Tool{Name: "destructive", Description: "Hints left to MCP's defaults.", InputSchema: empty,
		Annotations: &sdk.ToolAnnotations{}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil })
	return srv
}

func TestClientAgainstPlainSDKServer(t *testing.T) {
	t.Parallel()
	srv := sdkServer(t)
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(testContext(t), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	c, err := Connect(testContext(t), ct)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := testContext(t)

	names := map[string]llmtoolkit.Tool{}
	for _, tl := range c.Tools() {
		names[tl.Name] = tl
	}
	assert.Len(t, names, 4, "every page is listed; dotted.name and broken_schema are skipped: %v", names)
	assert.NotContains(t, names, "dotted.name")
	assert.NotContains(t, names, "broken_schema")

	greet := names["greet"]
	assert.Equal(t, &llmtoolkit.Annotations{ReadOnly: true, Destructive: false, OpenWorld: true}, greet.Annotations)
	assert.Equal(t, "object", greet.Parameters["type"])
	assert.Contains(t, greet.Parameters["properties"], "name", "schema inferred by the SDK")
	assert.Equal(t, "An untitled tool", names["untitled"].Description)
	assert.Equal(t, &llmtoolkit.Annotations{Destructive: true, OpenWorld: true}, names["destructive"].Annotations)

	res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	assert.False(t, res.IsError, res.Content)
	assert.Equal(t, "Hello, Ada!", res.Content)
	assert.Equal(t, &llmtoolkit.Display{Kind: "mcp", Payload: map[string]any{
		"structuredContent": map[string]any{"greeting": "Hello, Ada!"}}}, res.Display)

	res = llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "greet", Arguments: map[string]any{"name": ""}})
	assert.True(t, res.IsError)
	assert.Equal(t, "name is empty: say who to greet", res.Content)
	assert.ErrorIs(t, res.Err, ErrRemoteTool)

	res = llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "picture"})
	assert.Equal(t, "a red dot\n[resource link: file:///dot.png, image/png]", res.Content)
	assert.Equal(t, []llmtoolkit.Part{llmtoolkit.ImagePart("image/png", []byte{0x89, 'P', 'N', 'G'})}, res.Parts, "the image is kept as a part")
}

func TestClientRefresh(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "growing", Version: "v0"}, nil)
	ok := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(&sdk.Tool{Name: "one", Description: "First.", InputSchema: map[string]any{"type": "object"}}, ok)
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(testContext(t), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	c, err := Connect(testContext(t), ct)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	require.Len(t, c.Tools(), 1)
	srv.AddTool(&sdk.Tool{Name: "two", Description: "Second.", InputSchema: map[string]any{"type": "object"}}, ok)
	_, err = c.Resolve(testContext(t), llmtoolkit.Call{Name: "two"})
	require.ErrorIs(t, err, llmtoolkit.ErrUnknownTool, "not listed until Refresh")

	require.NoError(t, c.Refresh(testContext(t)))
	require.Len(t, c.Tools(), 2)
	out, err := c.Resolve(testContext(t), llmtoolkit.Call{Name: "two"})
	require.NoError(t, err)
	assert.Equal(t, "ok", out)
}

func TestClientOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	remote := fixture(t)
	ts := httptest.NewServer(Handler(remote, WithName("http-fixture")))
	t.Cleanup(ts.Close)

	c, err := Connect(testContext(t), HTTPTransport(ts.URL, ts.Client()))
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	assert.Equal(t, "http-fixture", c.Server())
	assert.Len(t, c.Tools(), 4)

	res := llmtoolkit.Execute(testContext(t), c, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "over http"}})
	assert.Equal(t, "over http", res.Content)
	res = llmtoolkit.Execute(testContext(t), c, llmtoolkit.Call{Name: "fail"})
	assert.True(t, res.IsError)
	assert.Equal(t, "disk full: free some space and retry", res.Content)
}

func TestClientOverCommand(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	cmd.Stderr = os.Stderr
	c, err := Connect(testContext(t), CommandTransport(cmd))
	require.NoError(t, err)
	assert.Equal(t, "subprocess", c.Server())

	res := llmtoolkit.Execute(testContext(t), c, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "from a process"}})
	assert.Equal(t, "from a process", res.Content)
	res = llmtoolkit.Execute(testContext(t), c, llmtoolkit.Call{Name: "boom"})
	assert.True(t, res.IsError)
	assert.Equal(t, "tool execution failed: kaboom", res.Content)

	// Close closes the server's input and waits for the process to exit.
	require.NoError(t, c.Close())
	require.NotNil(t, cmd.ProcessState, "Close waits for the server process")
	assert.True(t, cmd.ProcessState.Success(), "the server exits cleanly when its input closes: %v", cmd.ProcessState)
}

func TestConnectErrors(t *testing.T) {
	t.Parallel()
	_, err := Connect(testContext(t), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs a transport")

	cmd := exec.Command("/nonexistent/mcp-server")
	_, err = Connect(testContext(t), CommandTransport(cmd))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connecting to the MCP server")
}

func TestClientOutlivesConnectContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(testContext(t))
	c, err := Connect(ctx, serveInMemory(t, fixture(t)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	cancel()

	out, err := c.Resolve(testContext(t), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "still here"}})
	require.NoError(t, err, "the session is not bound to Connect's context")
	assert.Equal(t, "still here", out)
}
