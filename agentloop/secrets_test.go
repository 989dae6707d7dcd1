package agentloop_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// secretResolver has a tool whose password is declared sensitive and whose
// answer quotes it: a failure or a halt.
type secretResolver struct{ halt bool }

func (secretResolver) Tools() []llmtoolkit.Tool {
	t := llmtoolkit.MustTool("login", "Logs in.", map[string]any{"type": "object", "properties": map[string]any{"password": map[string]any{"type": "string"}}})
	t.SensitiveFields = []string{"password"}
	return []llmtoolkit.Tool{t}
}

func (s secretResolver) Resolve(_ context.Context, c llmtoolkit.Call) (string, error) {
	if s.halt {
		return "", llmtoolkit.Halt(fmt.Sprintf("password %v is compromised", c.Arguments["password"]))
	}
	return "", fmt.Errorf("password %v rejected", c.Arguments["password"])
}

// TestRunErrorsCarryNoDeclaredSecret: a circuit breaker's message and a
// halt's reason quote the tool's words; the error Run returns and logs has
// the declared secret scrubbed, for a well-formed and a malformed call.
func TestRunErrorsCarryNoDeclaredSecret(t *testing.T) {
	const secret = "hunter2-XYZ"
	calls := map[string]llmtoolkit.Call{
		"well-formed": {ID: "1", Name: "login", Arguments: map[string]any{"password": secret}},
		"malformed":   llmtoolkit.MalformedCall("1", "login", `{"password": "`+secret, errors.New("unexpected end of JSON input")),
	}
	for name, call := range calls {
		for _, halt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s halt=%v", name, halt), func(t *testing.T) {
				if halt && call.Malformed != nil {
					t.Skip("a malformed call never runs: it cannot halt")
				}
				var logs bytes.Buffer
				model := lt.NewScriptedModel(t, lt.CallTools(call), lt.CallTools(call), lt.CallTools(call), lt.Reply("done"))
				_, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, model.Send, agentloop.Options{
					Resolver: secretResolver{halt: halt}, BreakerThreshold: 2, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				require.Error(t, err)
				if halt {
					require.ErrorIs(t, err, llmtoolkit.ErrHalt)
				} else {
					require.ErrorIs(t, err, agentloop.ErrCircuitBreaker)
				}
				assert.NotContains(t, err.Error(), secret)
				assert.Contains(t, err.Error(), agentloop.Redacted)
				assert.NotContains(t, logs.String(), secret)
				var he *llmtoolkit.HaltError
				if errors.As(err, &he) {
					assert.NotContains(t, he.Error(), secret)
				}
			})
		}
	}
}
