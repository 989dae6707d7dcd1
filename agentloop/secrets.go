package agentloop

import (
	"errors"
	"fmt"
	"slices"

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
		raw := ""
		if c.Malformed != nil {
			raw = c.Malformed.Raw
		}
		secrets = append(secrets, redact.NewFields(def.SensitiveFields).Secrets(c.Arguments, raw)...)
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

// learnSecrets adds the declared secrets of calls (turnSecrets) to those
// the run's errors and logs are scrubbed of: every turn's, not only the
// last one's, since a tool may quote in turn 3 what the model sent in
// turn 1.
func (l *loop) learnSecrets(calls []llmtoolkit.Call) {
	if len(calls) == 0 {
		return
	}
	secrets := l.turnSecrets(calls)
	if len(secrets) == 0 {
		return
	}
	l.secretsMu.Lock()
	defer l.secretsMu.Unlock()
	for _, s := range secrets {
		if !slices.Contains(l.secrets, s) {
			l.secrets = append(l.secrets, s)
		}
	}
}

// scrub returns s with the run's secrets (learnSecrets) and URL passwords
// replaced by Redacted.
func (l *loop) scrub(s string) string {
	l.secretsMu.Lock()
	secrets := slices.Clone(l.secrets)
	l.secretsMu.Unlock()
	return redact.Scrub(s, secrets, Redacted)
}

// scrubValue returns v, or its text scrubbed when the text holds a secret.
func (l *loop) scrubValue(v any) any {
	text := fmt.Sprint(v)
	if scrubbed := l.scrub(text); scrubbed != text {
		return scrubbed
	}
	return v
}

// scrubRunError removes the run's secrets, of every turn, from the error
// Run returns, which is logged, given to the Tracer (and so to spans),
// encoded by durable engines and returned to the host, none of which may
// see a declared secret. The errors that quote a tool's words keep their
// type with the words scrubbed (a breaker's message, a halt's reason; a
// halt's tool error becomes a [*llmtoolkit.HaltError] with the scrubbed
// reason), a panic value it carries becomes its scrubbed text when that
// held a secret; any other error whose text holds a secret is wrapped in
// one whose text is scrubbed (errors.Is still holds through it).
func (l *loop) scrubRunError(err error) error {
	if err == nil {
		return nil
	}
	var cb *CircuitBreakerError
	var he *HaltedError
	switch {
	case errors.As(err, &cb):
		cb.Message = l.scrub(cb.Message)
	case errors.As(err, &he):
		he.Reason = l.scrub(he.Reason)
		if he.Err != nil && l.scrub(he.Err.Error()) != he.Err.Error() {
			he.Err = &llmtoolkit.HaltError{Reason: he.Reason}
		}
	}
	// A panic value the error carries (and durable engines store as text).
	if pe, ok := errors.AsType[*ModelPanicError](err); ok {
		pe.Value = l.scrubValue(pe.Value)
	}
	if pe, ok := errors.AsType[*CallbackPanicError](err); ok {
		pe.Value = l.scrubValue(pe.Value)
	}
	if pe, ok := errors.AsType[*llmtoolkit.PanicError](err); ok {
		pe.Value = l.scrubValue(pe.Value)
	}
	if msg := err.Error(); l.scrub(msg) != msg {
		return &scrubbedError{msg: l.scrub(msg), err: err}
	}
	return err
}

// scrubbedError is an error whose text was scrubbed of the run's secrets;
// it unwraps to the original, so errors.Is holds for the same sentinels.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
