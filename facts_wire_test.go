package llmtoolkit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// noopObserver observes nothing.
type noopObserver struct{}

func (noopObserver) ObserveCall(context.Context, llmtoolkit.Observation) {}

// TestHostFactsNeverReachAModel: a definition's host-side facts
// (SensitiveFields, Recipe, Observers, Gates, Paths, Commands, Deferred) appear in none of the forms a tool
// takes on its way to a model: its JSON, and each provider's tool format.
func TestHostFactsNeverReachAModel(t *testing.T) {
	tool := llmtoolkit.MustTool("login", "Logs in.", map[string]any{"type": "object"})
	tool.SensitiveFields = []string{"zz_host_only_field"}
	tool.Recipe = func(map[string]any) llmtoolkit.Plan { return llmtoolkit.Plan{} }
	tool.Observers = []llmtoolkit.Observer{noopObserver{}}
	tool.Gates = []llmtoolkit.Gate{func(_ context.Context, c llmtoolkit.Call) (llmtoolkit.Call, error) { return c, nil }}
	tool.Paths = &llmtoolkit.PathArguments{Names: []string{"zz_host_only_path"}, Canonical: func(_ context.Context, _, v string) (string, error) { return v, nil }}
	tool.Commands = &llmtoolkit.CommandArguments{Names: []string{"zz_host_only_command"}}
	tool.Deferred = true // written only by the ...WithSearch codecs
	tools := []llmtoolkit.Tool{tool}
	for name, v := range map[string]any{
		"json":             tool,
		"openai":           provider.OpenAITools(tools),
		"openai responses": provider.OpenAIResponsesTools(tools),
		"anthropic":        provider.AnthropicTools(tools),
		"gemini":           provider.GeminiTools(tools),
	} {
		t.Run(name, func(t *testing.T) {
			data, err := json.Marshal(v)
			require.NoError(t, err)
			assert.Contains(t, string(data), "login")
			for _, fact := range []string{"zz_host_only_field", "ensitive", "ecipe", "bserver", "Gates", "gates", "zz_host_only_path", "anonical", "zz_host_only_command", "ommands", "efer"} {
				assert.NotContains(t, string(data), fact)
			}
		})
	}
}
