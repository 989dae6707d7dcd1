package mcp

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type noopObserver struct{}

func (noopObserver) ObserveCall(context.Context, llmtoolkit.Observation) {}

// TestServerSendsNoHostFacts: a definition's host-side facts (Recipe,
// Observers, Paths) never reach an MCP client; its sensitive field names
// travel only in the tool's _meta, under MetaSensitiveFields.
func TestServerSendsNoHostFacts(t *testing.T) {
	t.Parallel()
	tool := llmtoolkit.MustTool("login", "Logs in.", map[string]any{"type": "object"})
	tool.SensitiveFields = []string{"zz_host_only_field"}
	tool.Recipe = func(map[string]any) llmtoolkit.Plan { return llmtoolkit.Plan{} }
	tool.Observers = []llmtoolkit.Observer{noopObserver{}}
	tool.Paths = &llmtoolkit.PathArguments{Names: []string{"zz_host_only_path"}, Canonical: func(_ context.Context, _, v string) (string, error) { return v, nil }}
	cs := sdkClient(t, staticResolver{tool})
	res, err := cs.ListTools(testContext(t), nil)
	require.NoError(t, err)
	require.Len(t, res.Tools, 1)
	assert.Equal(t, []any{"zz_host_only_field"}, res.Tools[0].Meta[MetaSensitiveFields])
	res.Tools[0].Meta = nil
	listed := mustJSON(t, res)
	assert.Contains(t, listed, "login")
	for _, fact := range []string{"zz_host_only_field", "ensitive", "ecipe", "bserver", "zz_host_only_path", "anonical"} {
		assert.NotContains(t, listed, fact)
	}
}

// TestSensitiveFieldsCrossMCP: the client's definitions carry the sensitive
// field names the server's tool declares, so that a trace.Recorder or an
// otelkit.Resolver around the Client redacts them; a hostile list is
// bounded and non-strings are ignored.
func TestSensitiveFieldsCrossMCP(t *testing.T) {
	t.Parallel()
	tool := llmtoolkit.MustTool("login", "Logs in.", map[string]any{"type": "object"})
	tool.SensitiveFields = []string{"password", "auth.token"}
	plain := llmtoolkit.MustTool("echo", "Echoes.", map[string]any{"type": "object"})
	c := ourClient(t, staticResolver{tool, plain})
	got, ok := c.LookupTool("login")
	require.True(t, ok)
	assert.Equal(t, []string{"password", "auth.token"}, got.SensitiveFields)
	got, ok = c.LookupTool("echo")
	require.True(t, ok)
	assert.Empty(t, got.SensitiveFields)

	many := make([]any, 0, 1000)
	for range 1000 {
		many = append(many, "f", 7, "")
	}
	names := sensitiveFieldsFrom(map[string]any{MetaSensitiveFields: many})
	assert.Len(t, names, maxSensitiveFields)
}

// TestDeferredCrossesMCP: a deferred definition is sent with
// MetaDeferred in its _meta and comes back deferred on the client's side;
// a plain one is not; a _meta value other than true is not a deferral.
func TestDeferredCrossesMCP(t *testing.T) {
	t.Parallel()
	lazy := llmtoolkit.MustTool("lazy", "Loaded on demand.", map[string]any{"type": "object"})
	lazy.Deferred = true
	plain := llmtoolkit.MustTool("echo", "Echoes.", map[string]any{"type": "object"})

	cs := sdkClient(t, staticResolver{lazy, plain})
	res, err := cs.ListTools(testContext(t), nil)
	require.NoError(t, err)
	require.Len(t, res.Tools, 2)
	for _, st := range res.Tools {
		assert.Equal(t, st.Name == "lazy", st.Meta[MetaDeferred] == true, st.Name)
	}

	c := ourClient(t, staticResolver{lazy, plain})
	got, ok := c.LookupTool("lazy")
	require.True(t, ok)
	assert.True(t, got.Deferred)
	got, ok = c.LookupTool("echo")
	require.True(t, ok)
	assert.False(t, got.Deferred)

	// Every tool of a server, whatever it sends: llmtoolkit.Defer.
	for _, tool := range llmtoolkit.Defer(c).Tools() {
		assert.True(t, tool.Deferred, tool.Name)
	}
	st, err := fromSDKTool(&sdk.Tool{Name: "x", Description: "x", InputSchema: map[string]any{"type": "object"}, Meta: sdk.Meta{MetaDeferred: "true"}}, "srv", 100)
	require.NoError(t, err)
	assert.False(t, st.Deferred)
}
