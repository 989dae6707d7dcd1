package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/agent"
)

// TestDisplayKeys pins the JSON keys of the agent layer's Display payloads
// to the documented list (codetools' package doc "Display payloads", README): the
// project's one key style, camelCase, every key always present.
func TestDisplayKeys(t *testing.T) {
	tests := []struct {
		name    string
		payload any
		keys    []string
	}{
		{"todos", agent.TodosPayload{}, []string{"todos"}},
		{"todo item", agent.Todo{}, []string{"id", "content", "status"}},
		{"subagent", agent.SubAgentPayload{}, []string{"id", "description", "iterations", "toolCalls", "durationMs", "usage", "costUsd", "unpricedCalls", "missingPrices", "error", "isolation", "workspace", "branch", "files", "diff", "diffTruncated", "patchFile", "outcome", "conflicts", "resumed"}},
		{"subagent usage", agent.SubAgentUsage{}, []string{"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(tt.payload)
			require.NoError(t, err)
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(data, &m))
			got := make([]string, 0, len(m))
			for k := range m {
				got = append(got, k)
			}
			assert.ElementsMatch(t, tt.keys, got, "keys of the zero value's encoding")
		})
	}
}
