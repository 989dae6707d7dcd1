package dbos

import (
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// Result is how a run ended, as recorded: what agentloop.Run returned.
type Result struct {
	// Response is the last answer of the model.
	Response agentloop.Response `json:"response"`
	// Messages is the whole conversation, every tool call paired with its
	// tool message.
	Messages []agentloop.Message `json:"messages"`
	// Error is the loop's error (agentloop.EncodeError), nil when the run
	// ended with an answer.
	Error *agentloop.ErrorOutcome `json:"error,omitempty"`
}

// Err returns the loop's error, or nil: an [*agentloop.RecordedError]
// with the original message, for which errors.Is holds for the sentinels
// the original matched (agentloop.ErrMaxIterations, ErrCircuitBreaker,
// ErrHalted, llmtoolkit.ErrHalt, context.Canceled...).
func (r Result) Err() error {
	return r.Error.Unpack()
}
