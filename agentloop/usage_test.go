package agentloop_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

func usd(v float64) *float64 { return &v }

func TestUsageAdd(t *testing.T) {
	a := agentloop.Usage{InputTokens: 1, OutputTokens: 2, ContextTokens: 3, CacheReadTokens: 4, CacheWriteTokens: 5, ReasoningTokens: 6, CostUSD: usd(0.25)}
	b := agentloop.Usage{InputTokens: 10, OutputTokens: 20, ContextTokens: 30, CacheReadTokens: 40, CacheWriteTokens: 50, ReasoningTokens: 60, CostUSD: usd(0.5)}
	assert.Equal(t, agentloop.Usage{InputTokens: 11, OutputTokens: 22, ContextTokens: 33, CacheReadTokens: 44, CacheWriteTokens: 55, ReasoningTokens: 66, CostUSD: usd(0.75)}, a.Add(b))
	b.CostUSD = nil
	assert.Nil(t, a.Add(b).CostUSD, "a cost reported for one call only is no sum")
	assert.Equal(t, 3, a.Prompt())
	assert.Equal(t, 7, agentloop.Usage{InputTokens: 7}.Prompt())
}
