package agentloop

import (
	"encoding/json"
	"errors"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/redact"
)

// Redacted replaces, in the errors Run returns and logs, every value of an
// argument field a tool declares sensitive ([llmtoolkit.Tool.SensitiveFields])
// and every URL's password, as package trace stores them.
const Redacted = "[REDACTED]"

// turnSecrets returns the values of the sensitive fields of a turn's calls,
// by each tool's definition as the loop's resolver lists it: from the
// decoded arguments, or from the raw text of a malformed call.
func (l *loop) turnSecrets(calls []llmtoolkit.Call) (secrets []string) {
	if l.resolver == nil {
		return nil
	}
	for _, c := range calls {
		def, ok := findGuarded(l.resolver, c.Name)
		if !ok || len(def.SensitiveFields) == 0 {
			continue
		}
		fields := redact.NewFields(def.SensitiveFields)
		if c.Malformed != nil {
			secrets = append(secrets, fields.Raw(c.Malformed.Raw)...)
			continue
		}
		var args any
		if data, err := json.Marshal(c.Arguments); err == nil && json.Unmarshal(data, &args) == nil {
			secrets = append(secrets, fields.Apply(args, Redacted)...)
		}
	}
	return secrets
}

// findGuarded is [llmtoolkit.FindTool], a panic of the resolver meaning
// "not found" (Execute reported it already).
func findGuarded(r llmtoolkit.Resolver, name string) (t llmtoolkit.Tool, ok bool) {
	defer func() {
		if recover() != nil {
			t, ok = llmtoolkit.Tool{}, false
		}
	}()
	return llmtoolkit.FindTool(r, name)
}

// scrubRunError removes the turn's secrets from the errors that quote a
// tool's words (a circuit breaker's message, a halt's reason): the error
// Run returns is logged, given to the Tracer and to the host, none of which
// may see a declared secret. A halt's tool error becomes a
// [*llmtoolkit.HaltError] with the scrubbed reason.
func (l *loop) scrubRunError(err error, calls []llmtoolkit.Call) error {
	var cb *CircuitBreakerError
	var he *HaltedError
	switch {
	case errors.As(err, &cb):
		cb.Message = redact.Scrub(cb.Message, l.turnSecrets(calls), Redacted)
	case errors.As(err, &he):
		secrets := l.turnSecrets(calls)
		he.Reason = redact.Scrub(he.Reason, secrets, Redacted)
		if he.Err != nil && redact.Scrub(he.Err.Error(), secrets, Redacted) != he.Err.Error() {
			he.Err = &llmtoolkit.HaltError{Reason: he.Reason}
		}
	}
	return err
}
