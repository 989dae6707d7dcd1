package agentloop

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmtoolkit/llmtoolkit"
)

// TestStateSizeMatchesRange checks that stateSize, which looks the known
// keys up before ranging, counts every map as a range over it does: known
// keys alone, unknown keys alone, and both.
func TestStateSizeMatchesRange(t *testing.T) {
	v := json.RawMessage(`{"content":[{"type":"thinking"}]}`)
	tests := []struct {
		name  string
		state llmtoolkit.ProviderState
	}{
		{"nil", nil},
		{"empty", llmtoolkit.ProviderState{}},
		{"one known", llmtoolkit.ProviderState{"gemini": v}},
		{"last known", llmtoolkit.ProviderState{"openai-responses": v}},
		{"three known", llmtoolkit.ProviderState{"anthropic": v, "gemini": v[:5], "openai-responses": v[:1]}},
		{"unknown", llmtoolkit.ProviderState{"other": v}},
		{"known and unknown", llmtoolkit.ProviderState{"anthropic": v, "other-format": v[:3]}},
		{"all and more", llmtoolkit.ProviderState{"anthropic": v, "gemini": v, "openai-responses": v, "x": nil}},
		{"empty values", llmtoolkit.ProviderState{"anthropic": nil, "": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := 0
			for k, v := range tt.state {
				want += len(k) + len(v)
			}
			assert.Equal(t, want, stateSize(tt.state))
		})
	}
}
