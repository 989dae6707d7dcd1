package agentresolver

import (
	"context"
	"errors"

	"github.com/llmtoolkit/llmtoolkit"
)

// Handler is one tool: its definition and its execution.
//
// Execute receives the arguments already validated against the
// definition's schema (when called through a [Resolver]) and the session,
// if any, in ctx (read it with [llmtoolkit.Scope].Session). A handler that
// keeps state between calls holds it in its own value, behind a mutex:
// calls may run concurrently.
type Handler interface {
	// Definition describes the tool. [New] calls it once.
	Definition() llmtoolkit.Tool
	// Execute runs one call and returns the content for the model.
	Execute(ctx context.Context, args map[string]any) (string, error)
}

// Sensitive is an optional interface of a [Handler]: the arguments whose
// values are secrets and must be redacted from logs and traces, named as in
// [WithSensitiveFields]. [New] adds them to the tool's definition
// ([llmtoolkit.Tool.SensitiveFields]), which is what travels on; a handler
// may as well set them in its Definition.
type Sensitive interface {
	SensitiveFields() []string
}

// validating is implemented by handlers that check their arguments against
// their schema themselves (those built by [Func]), so that [Resolver] does
// not validate twice.
type validating interface {
	validatesArguments()
}

// broken is implemented by handlers whose construction failed (a [Func]
// whose argument type has no schema); [New] reports the error.
type broken interface {
	buildError() error
}

// WithOptions returns h with options applied: [WithTimeout] puts a deadline
// on the context Execute receives, [WithSensitiveFields] adds to the
// handler's own sensitive fields, and the annotation and metadata options
// change the definition. Use it to configure a handler value as [Func]'s
// options configure a function.
func WithOptions(h Handler, opts ...Option) Handler {
	if h == nil {
		return nil
	}
	return &optioned{h: h, cfg: newConfig(opts)}
}

// optioned is a Handler with options.
type optioned struct {
	h   Handler
	cfg config
}

func (o *optioned) Definition() llmtoolkit.Tool { return o.cfg.apply(o.h.Definition()) }

func (o *optioned) Execute(ctx context.Context, args map[string]any) (string, error) {
	if o.cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.cfg.timeout)
		defer cancel()
	}
	return o.h.Execute(ctx, args)
}

func (o *optioned) SensitiveFields() []string {
	var inner []string
	if s, ok := o.h.(Sensitive); ok {
		inner = s.SensitiveFields()
	}
	return o.cfg.sensitiveFields(inner)
}

// isValidating reports whether h validates its own arguments.
func isValidating(h Handler) bool {
	if o, ok := h.(*optioned); ok {
		return isValidating(o.h)
	}
	_, ok := h.(validating)
	return ok
}

// buildErrorOf returns the construction error of h, if any.
func buildErrorOf(h Handler) error {
	if o, ok := h.(*optioned); ok {
		return buildErrorOf(o.h)
	}
	if b, ok := h.(broken); ok {
		return b.buildError()
	}
	return nil
}

var errNilHandler = errors.New("handler is nil")
