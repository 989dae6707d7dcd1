package llmtoolkit

import "errors"

// ModelMessenger is implemented by an error whose text for the model differs
// from its text for the host: a refusal caused by the host's configuration,
// say, whose fix the host must read but the model cannot act on. [Execute]
// shows the model ModelMessage as the tool's answer and keeps the error, with
// its full text, in [Result.Err]. It is found anywhere in the error's chain
// (errors.As).
type ModelMessenger interface {
	error
	// ModelMessage is the text the model reads.
	ModelMessage() string
}

// modelMessage returns the text the model reads for err: the ModelMessage
// of a [ModelMessenger] in its chain, else its Error.
func modelMessage(err error) string {
	if mm, ok := errors.AsType[ModelMessenger](err); ok {
		return mm.ModelMessage()
	}
	return err.Error()
}
