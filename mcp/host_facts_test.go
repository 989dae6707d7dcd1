package mcp

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

type noopObserver struct{}

func (noopObserver) ObserveCall(context.Context, llmtoolkit.Observation) {}

// TestServerSendsNoHostFacts: a definition's host-side facts
// (SensitiveFields, Recipe, Observers, Paths) never reach an MCP client.
func TestServerSendsNoHostFacts(t *testing.T) {
	tool := llmtoolkit.MustTool("login", "Logs in.", map[string]any{"type": "object"})
	tool.SensitiveFields = []string{"zz_host_only_field"}
	tool.Recipe = func(map[string]any) llmtoolkit.Plan { return llmtoolkit.Plan{} }
	tool.Observers = []llmtoolkit.Observer{noopObserver{}}
	tool.Paths = &llmtoolkit.PathArguments{Names: []string{"zz_host_only_path"}, Canonical: func(_ context.Context, _, v string) (string, error) { return v, nil }}
	cs := sdkClient(t, staticResolver{tool})
	res, err := cs.ListTools(testContext(t), nil)
	require.NoError(t, err)
	require.Len(t, res.Tools, 1)
	listed := mustJSON(t, res)
	assert.Contains(t, listed, "login")
	for _, fact := range []string{"zz_host_only_field", "ensitive", "ecipe", "bserver", "zz_host_only_path", "anonical"} {
		assert.NotContains(t, listed, fact)
	}
}
