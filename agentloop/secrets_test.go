package agentloop_test

import (
	"bytes"
	"context"
	"encoding/json"
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

// sessionResolver has login (its password declared sensitive), which
// succeeds, and status (nothing sensitive), which fails quoting the
// password of the last login.
type sessionResolver struct {
	password *string
}

func (sessionResolver) Tools() []llmtoolkit.Tool {
	login := secretResolver{}.Tools()[0]
	status := llmtoolkit.MustTool("status", "Says how the session is.", map[string]any{"type": "object"})
	return []llmtoolkit.Tool{login, status}
}

func (s sessionResolver) Resolve(_ context.Context, c llmtoolkit.Call) (string, error) {
	if c.Name == "login" {
		*s.password = fmt.Sprint(c.Arguments["password"])
		return "logged in", nil
	}
	return "", fmt.Errorf("session of %s expired", *s.password)
}

// recordingTracer keeps the error of the run's end.
type recordingTracer struct{ end error }

func (r *recordingTracer) StartRun(ctx context.Context) (context.Context, func(agentloop.RunEnd)) {
	return ctx, func(e agentloop.RunEnd) { r.end = e.Err }
}

func (r *recordingTracer) StartModelCall(ctx context.Context, _ int) (context.Context, func(agentloop.Response, error)) {
	return ctx, func(agentloop.Response, error) {}
}

// TestRunErrorsCarryNoSecretOfAnEarlierTurn (issue 35, row 16): the
// password the model sent to login in turn 1 is quoted by another tool's
// errors in turns 2 to 4 (the breaker trips), or by a panic of the model
// in turn 3: the error Run returns, its log record, the Tracer's RunEnd
// and the error's stored form (agentloop.EncodeError, what durable engines
// keep) hold no secret of any turn (before: only the last turn's secrets
// were scrubbed). errors.Is still holds.
func TestRunErrorsCarryNoSecretOfAnEarlierTurn(t *testing.T) {
	const secret = "hunter2-XYZ"
	login := llmtoolkit.Call{ID: "1", Name: "login", Arguments: map[string]any{"password": secret}}
	status := func(id string) llmtoolkit.Call {
		return llmtoolkit.Call{ID: id, Name: "status", Arguments: map[string]any{}}
	}
	modelPanic := lt.Respond(func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
		panic("model choked on " + secret)
	})
	for _, tc := range []struct {
		name  string
		turns []lt.Turn
		is    error
	}{
		{"breaker", []lt.Turn{lt.CallTools(login), lt.CallTools(status("2")), lt.CallTools(status("3")), lt.CallTools(status("4")), lt.Reply("done")}, agentloop.ErrCircuitBreaker},
		{"model panic", []lt.Turn{lt.CallTools(login), lt.CallTools(status("2")), modelPanic}, agentloop.ErrModelPanic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			var password string
			tracer := &recordingTracer{}
			model := lt.NewScriptedModel(t, tc.turns...)
			_, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, model.Send, agentloop.Options{
				Resolver: sessionResolver{password: &password}, Tracer: tracer, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.Error(t, err)
			require.ErrorIs(t, err, tc.is)
			assert.NotContains(t, err.Error(), secret)
			assert.Contains(t, err.Error(), agentloop.Redacted)
			assert.NotContains(t, logs.String(), secret)
			require.Error(t, tracer.end)
			assert.NotContains(t, tracer.end.Error(), secret)
			stored, jerr := json.Marshal(agentloop.EncodeError(err))
			require.NoError(t, jerr)
			assert.NotContains(t, string(stored), secret)
		})
	}
}
