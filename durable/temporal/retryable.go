package temporal

import (
	"errors"
	"fmt"
)

// ErrRetryable is wrapped by the errors of [Retryable].
var ErrRetryable = errors.New("retryable")

// RetryableError marks the failure of a model call or a tool call as
// transient: the activity fails, and Temporal runs it again under the run's
// retry policy (RunInput.ModelRetry, RunInput.ToolRetry) instead of
// recording the failure as the call's outcome. When the attempts are spent,
// the model call ends the run with an agentloop.LLMError and the tool call
// goes back to the model as an error result.
type RetryableError struct {
	// Err is the failure.
	Err error
}

// Error returns "retryable: " and Err's message.
func (e *RetryableError) Error() string { return fmt.Sprintf("retryable: %v", e.Err) }

// Unwrap returns Err and [ErrRetryable].
func (e *RetryableError) Unwrap() []error { return []error{e.Err, ErrRetryable} }

// Retryable marks err as transient (see [RetryableError]): return it from a
// SendFunc (a 429 or a 503 of the provider) or from a tool's handler (a
// connection reset) to have the activity run again. Retryable(nil) is nil.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &RetryableError{Err: err}
}
