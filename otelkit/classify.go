package otelkit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// classifyTool returns the error.type of a failed tool call: the host's
// classes ([WithErrorClass]) first, then llmtoolkit's sentinels, then an
// ErrorType() string method of an error in the chain (OpenTelemetry's
// convention), then the context's end, then fs.ErrPermission; anything
// else is ClassToolError.
func (c *config) classifyTool(ctx context.Context, err error) string {
	for _, ec := range c.classes {
		for _, target := range ec.targets {
			if errors.Is(err, target) {
				return ec.class
			}
		}
	}
	switch {
	case errors.Is(err, llmtoolkit.ErrInvalidArguments), errors.Is(err, llmtoolkit.ErrInvalidCall):
		return ClassValidation
	case errors.Is(err, llmtoolkit.ErrUnknownTool):
		return ClassUnknownTool
	case errors.Is(err, llmtoolkit.ErrToolPanic):
		return ClassPanic
	case errors.Is(err, llmtoolkit.ErrHalt):
		return ClassHalt
	case errors.Is(err, llmtoolkit.ErrDenied):
		return ClassDenied
	}
	if s := declaredType(err); s != "" {
		return s
	}
	if class := contextClass(err); class != "" {
		return class
	}
	if ctxErr := ctx.Err(); ctxErr != nil { // the tool gave up for it, without saying so
		return contextClass(ctxErr)
	}
	if errors.Is(err, fs.ErrPermission) {
		return ClassDenied
	}
	return ClassToolError
}

// classifyRun returns the error.type of a failed agent run.
func classifyRun(err error) string {
	var llmErr *agentloop.LLMError
	switch {
	case errors.Is(err, agentloop.ErrMaxIterations):
		return ClassMaxIterations
	case errors.Is(err, agentloop.ErrCircuitBreaker):
		return ClassCircuitBreaker
	case errors.Is(err, agentloop.ErrHalted):
		return ClassHalted
	case errors.As(err, &llmErr):
		return ClassModelError
	}
	if class := contextClass(err); class != "" {
		return class
	}
	return errorTypeName(err)
}

// classifyModel returns the error.type of a failed model call.
func classifyModel(err error) string {
	if errors.Is(err, agentloop.ErrModelPanic) {
		return ClassPanic
	}
	if class := contextClass(err); class != "" {
		return class
	}
	return errorTypeName(err)
}

// contextClass is ClassTimeout or ClassCanceled for an error wrapping a
// context's end, or "".
func contextClass(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	}
	return ""
}

// declaredType is the ErrorType() of the first error in err's chain that
// has such a method (OpenTelemetry's convention for an error to name its
// class), or "".
func declaredType(err error) string {
	var et interface{ ErrorType() string }
	if errors.As(err, &et) {
		return et.ErrorType()
	}
	return ""
}

// errorTypeName names an error the way OpenTelemetry's semconv.ErrorType
// does: its declared ErrorType(), else the package-qualified name of its
// type once fmt.Errorf wrappers are removed. Errors of anonymous standard
// types (errors.New, fmt.Errorf without %w, errors.Join) give "_OTHER":
// their type says nothing.
func errorTypeName(err error) string {
	if s := declaredType(err); s != "" {
		return s
	}
	for {
		u := errors.Unwrap(err)
		if u == nil || !isFmtWrapper(err) {
			break
		}
		err = u
	}
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch pkg := t.PkgPath(); {
	case t.Name() == "" || pkg == "errors" || pkg == "fmt":
		return errorTypeFallback
	default:
		return pkg + "." + t.Name()
	}
}

// fmtWrapError is the type of fmt.Errorf's errors that wrap one error.
var fmtWrapError = reflect.TypeOf(fmt.Errorf("%w", errors.New("x")))

func isFmtWrapper(err error) bool { return reflect.TypeOf(err) == fmtWrapError }
