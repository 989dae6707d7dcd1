package llmtoolkit

import (
	"errors"
	"fmt"
)

// ErrDenied is wrapped by the error of a call that a permission check
// refused (see [DeniedError]). The call never ran; its result goes back to
// the model as an error that says so, a trace wrapper records it like any
// call, and agentloop's circuit breaker does not count it (a refusal is the
// host's decision, not a failing tool).
var ErrDenied = errors.New("permission denied")

// DeniedError is the error of a call a permission check refused. It wraps
// [ErrDenied].
type DeniedError struct {
	// Tool is the refused tool's name.
	Tool string
	// Reason says why, for the model: what was refused and what to do
	// instead.
	Reason string
}

// Error returns `permission denied: tool "NAME" was not run: REASON`.
func (e *DeniedError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("permission denied: tool %q was not run", e.Tool)
	}
	return fmt.Sprintf("permission denied: tool %q was not run: %s", e.Tool, e.Reason)
}

// Unwrap returns [ErrDenied].
func (e *DeniedError) Unwrap() error { return ErrDenied }

// ErrLimitReached is wrapped by the error of a call that a limit the host
// set refused before it ran: a budget spent (package agent's sub-agent
// budget) or a depth reached (a sub-agent that may not spawn). Like
// [ErrDenied], it is the host's decision, not a failing tool: the call
// never ran, the model reads why and can go on without it, and
// agentloop's circuit breaker does not count it.
var ErrLimitReached = errors.New("limit reached")

// Deny returns a [*DeniedError] for tool, with the reason the model will
// read.
func Deny(tool, reason string) error { return &DeniedError{Tool: tool, Reason: reason} }
