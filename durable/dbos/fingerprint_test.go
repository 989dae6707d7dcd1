package dbos

import (
	"context"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fingerprintAgent is an agent with one tool, a system prompt and loop
// bounds: what TestFingerprintContextPolicy varies the policy of.
func fingerprintAgent() (Input, agentloop.Options) {
	tool := llmtoolkit.MustTool("append", "appends a line", map[string]any{
		"type": "object", "properties": map[string]any{"line": map[string]any{"type": "string"}}, "required": []any{"line"},
	})
	in := Input{Messages: []agentloop.Message{agentloop.SystemMessage("You append lines."), agentloop.UserMessage("append four lines")}}
	return in, agentloop.Options{Tools: []llmtoolkit.Tool{tool}, MaxIterations: 7, MaxToolCalls: 20}
}

// noPolicyFingerprint is the fingerprint of fingerprintAgent as the
// engine computed it before the context policy was part of it: a run
// started then, without a policy, resumes after the upgrade.
const noPolicyFingerprint = "b6c373ddf5ed240077e443d16009b8561ad6223ad545eb07fd570f810137fc7c"

// TestFingerprintContextPolicy: the agent's fingerprint holds its context
// budget and policy (agentloop.ContextFingerprint), so that a run resumed
// under another policy stops with ErrAgentChanged; without a policy it is
// the fingerprint of before.
func TestFingerprintContextPolicy(t *testing.T) {
	in, opts := fingerprintAgent()
	plain, err := fingerprint(in, opts)
	require.NoError(t, err)
	assert.Equal(t, noPolicyFingerprint, plain, "a zero policy hashes as before")

	summarize := func(context.Context, []agentloop.Message) (string, error) { return "summary", nil }
	policy := func(budget, keep int, sum bool) agentloop.Options {
		o := opts
		o.ContextBudget = budget
		o.ContextPolicy = agentloop.ContextPolicy{KeepToolResults: keep, SpillBytes: 2048, SpillRoot: "/ws"}
		if sum {
			o.ContextPolicy.Summarize = summarize
		}
		return o
	}
	base, err := fingerprint(in, policy(4000, 2, true))
	require.NoError(t, err)
	assert.NotEqual(t, plain, base, "a policy changes the fingerprint")
	for name, o := range map[string]agentloop.Options{
		"budget":           policy(8000, 2, true),
		"kept results":     policy(4000, 3, true),
		"no summarizer":    policy(4000, 2, false),
		"no spilling":      func() agentloop.Options { o := policy(4000, 2, true); o.ContextPolicy.SpillBytes = 0; return o }(),
		"no budget at all": opts,
	} {
		fp, err := fingerprint(in, o)
		require.NoError(t, err)
		assert.NotEqual(t, base, fp, name)
	}
	same := policy(4000, 2, true)
	same.ContextPolicy.SpillRoot = "/another/workspace" // the paths shown are relative to it
	fp, err := fingerprint(in, same)
	require.NoError(t, err)
	assert.Equal(t, base, fp, "the same policy in another folder")
}
