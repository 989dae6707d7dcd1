package agentresolver

import (
	"context"

	"fmt"
	"reflect"

	"github.com/llmtoolkit/llmtoolkit"
)

// Func returns a [Handler] for a typed Go function: the tool's schema is
// derived from A, and each call's arguments are checked against it and
// decoded into an A before fn runs.
//
// A must be a struct (or a pointer to one). Its exported fields are the
// tool's parameters, named and described by their tags:
//
//   - json:"name" names the property (fields without a json tag use the Go
//     name, "-" skips the field, embedded structs are flattened, as in
//     encoding/json). A field is required unless its tag has omitempty or
//     omitzero.
//   - jsonschema:"text" is the property's description, following
//     github.com/google/jsonschema-go (the whole tag is the description; it
//     must not begin with WORD=).
//   - jsonschema_enum:"a,b,c" lists the allowed values of a string, integer
//     or number field, or of the elements of a slice of them (spaces around
//     values are trimmed; values cannot contain commas).
//
// Go types map to JSON Schema as encoding/json maps them to JSON: strings,
// booleans, integers (with minimum and maximum for sized and unsigned ones),
// numbers, nested structs (inlined: no $ref), slices and arrays, maps with
// string keys (objects with additionalProperties), pointers (the element's
// schema; the field is optional only by omitempty), time.Time (a string of
// format date-time, RFC 3339), []byte (base64), types implementing
// encoding.TextUnmarshaler (a string) and any (any value: {}). Every object
// has "properties", so every provider accepts the schema. A type that
// contains itself, channels, functions, complex numbers and maps with
// non-string keys have no schema.
//
// Arguments are validated against the schema; properties it does not name
// are ignored, so a model that invents one still gets its call run.
// Invalid arguments give an *llmtoolkit.ArgumentsError naming each bad
// argument, and fn is not called.
//
// Func does not return an error, so that tools can be listed inline in
// [New]: an A without a schema, an invalid name or description, or a nil fn
// makes [New] fail with the problem, and the handler's Execute return it.
func Func[A any](name, description string, fn func(ctx context.Context, args A) (string, error), opts ...Option) Handler {
	h := &funcHandler[A]{fn: fn, cfg: newConfig(opts)}
	h.tool = llmtoolkit.Tool{Name: name, Description: description}
	if fn == nil {
		h.err = fmt.Errorf("%w %q: the function is nil", llmtoolkit.ErrInvalidTool, name)
		return h
	}
	plan, err := planFor(reflect.TypeFor[A]())
	if err != nil {
		h.err = fmt.Errorf("%w %q: %w", llmtoolkit.ErrInvalidTool, name, err)
		return h
	}
	tool, err := llmtoolkit.NewToolFrom(h.cfg.apply(llmtoolkit.Tool{Name: name, Description: description, Parameters: plan.schema()}))
	if err != nil {
		h.err = err
		return h
	}
	h.tool, h.plan = tool, plan
	return h
}

// funcHandler is the Handler Func builds. Its plan is built once and read
// concurrently; it holds no mutable state.
type funcHandler[A any] struct {
	tool llmtoolkit.Tool
	plan *node
	fn   func(ctx context.Context, args A) (string, error)
	cfg  config
	err  error
}

// Definition returns the tool with the schema derived from A.
func (h *funcHandler[A]) Definition() llmtoolkit.Tool { return h.tool }

// Execute validates args, decodes them into an A and calls the function.
func (h *funcHandler[A]) Execute(ctx context.Context, args map[string]any) (string, error) {
	if h.err != nil {
		return "", h.err
	}
	var a A
	if err := h.plan.decodeArgs(h.tool.Name, args, reflect.ValueOf(&a).Elem()); err != nil {
		return "", err
	}
	if h.cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.cfg.timeout)
		defer cancel()
	}
	return h.fn(ctx, a)
}

// SensitiveFields returns the names given with [WithSensitiveFields].
func (h *funcHandler[A]) SensitiveFields() []string { return h.cfg.sensitiveFields(nil) }

func (h *funcHandler[A]) validatesArguments() {}

func (h *funcHandler[A]) buildError() error { return h.err }
