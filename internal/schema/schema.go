package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Schema is one parameter schema compiled: the full validator, its fast
// form (nil outside the fast subset), and the idle metered copies the
// bounded validation uses. It is safe for concurrent use.
type Schema struct {
	full *jsonschema.Schema
	fast *fastSchema
	src  []byte // the schema's JSON, to compile metered copies from

	mu   sync.Mutex
	idle []*meteredSchema
}

// maxIdleCopies bounds the idle metered copies a Schema keeps.
const maxIdleCopies = 8

// Compile compiles params, a JSON Schema object. Its error says what is
// wrong, starting "parameters ...", for the caller to prefix with the
// tool's name. A "$ref" to another document is refused: a tool's schema
// is self-contained.
func Compile(params map[string]any) (*Schema, error) {
	data, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("parameters cannot be encoded as JSON: %w", err)
	}
	full, err := compile(data, nil)
	if err != nil {
		return nil, err
	}
	return &Schema{full: full, fast: compileFast(params), src: data}, nil
}

// compile compiles the schema's JSON, with m counting the validation's
// steps on every subschema when it is not nil.
func compile(data []byte, m *meter) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	// Never load remote or local documents named by a "$ref": a tool schema
	// is self-contained.
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("external schema references are not allowed (%s); inline the definition", s)
	}
	if m != nil {
		c.RegisterExtension("llmtoolkit-meter", nil, meterCompiler{m})
	}
	const url = "mem://tool/parameters.json"
	if err := c.AddResource(url, bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("parameters is not valid JSON Schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("parameters is not valid JSON Schema: %w", err)
	}
	return s, nil
}

// FastValid reports whether the fast path proves args valid. False means
// "not proven": the schema is outside the fast subset, or args fail it and
// [Schema.Validate] gives the complete answer.
func (s *Schema) FastValid(args map[string]any) bool {
	if s.fast == nil || args == nil {
		return false
	}
	valid, ok := s.fast.valid(args)
	return valid && ok
}

// Nodes is the expanded size of the schema (see [Schema.Validate]'s
// bounds): the number of (sub)schemas with every reference replaced by
// the schema it names, a reference that recurses into itself counted
// once, saturating at 1<<30.
func (s *Schema) Nodes() int { return schemaNodes(s.full) }

// Violations is the error of arguments that do not satisfy the schema:
// every problem as "JSON pointer: message", sorted, each once.
type Violations []string

func (v Violations) Error() string { return strings.Join(v, "; ") }

// PanicError is a panic of the validator, recovered.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("the validator panicked: %v", e.Value) }

// Validate checks v, a JSON value (see [IsJSONValue]), against the schema
// with the full validator, bounded: past [Steps] plus [StepsPerValue] per
// JSON value of v, it stops with an error wrapping [ErrTooComplex]; when
// ctx ends first it answers ctx's error at once, the validation stopping
// within a few hundred steps in its goroutine. The error is [Violations]
// when v does not satisfy the schema, a [*PanicError] when the validator
// panicked.
func (s *Schema) Validate(ctx context.Context, v any) error {
	ms, err := s.acquire()
	if err != nil {
		return err
	}
	run := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				if stop, ok := p.(meterStop); ok {
					err = stop.err
					return
				}
				err = &PanicError{Value: p, Stack: debug.Stack()}
			}
		}()
		ms.meter.ctx, ms.meter.limit = ctx, Steps+StepsPerValue*countValues(v)
		err = ms.schema.Validate(v)
		s.release(ms)
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return violations(ve)
		}
		return err
	}
	if ctx.Done() == nil {
		return run()
	}
	done := make(chan error, 1)
	go func() { done <- run() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// acquire returns an idle metered copy of the schema, compiling a new one
// when none is idle.
func (s *Schema) acquire() (*meteredSchema, error) {
	s.mu.Lock()
	if n := len(s.idle); n > 0 {
		ms := s.idle[n-1]
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		return ms, nil
	}
	s.mu.Unlock()
	m := &meter{}
	full, err := compile(s.src, m)
	if err != nil {
		return nil, err
	}
	return &meteredSchema{schema: full, meter: m}, nil
}

// release gives ms back for later validations.
func (s *Schema) release(ms *meteredSchema) {
	ms.meter.ctx, ms.meter.steps, ms.meter.limit = nil, 0, 0
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.idle) < maxIdleCopies {
		s.idle = append(s.idle, ms)
	}
}

// violations flattens a validation error tree into its leaves.
func violations(ve *jsonschema.ValidationError) Violations {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := e.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			out = append(out, loc+": "+withFix(e.Message))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(out)
	return slices.Compact(out)
}

// withFix adds a hint to the messages whose fix is not obvious from the text.
func withFix(msg string) string {
	switch {
	case strings.HasPrefix(msg, "missing properties: "):
		// Sorted, so that the same call always reads the same.
		names := strings.Split(strings.TrimPrefix(msg, "missing properties: "), ", ")
		slices.Sort(names)
		return "missing properties: " + strings.Join(names, ", ") + " (add them)"
	case strings.HasPrefix(msg, "missing properties"):
		return msg + " (add them)"
	case strings.HasPrefix(msg, "additionalProperties"):
		return msg + " (remove them)"
	}
	return msg
}

// NonJSONNumbers lists, as violations, the numbers in v that JSON cannot
// hold (NaN, ±Inf) and the json.Number values the validator cannot judge
// (not numbers, or exponents beyond big.Rat): the validator is never
// given them.
func NonJSONNumbers(v any) Violations { return nonJSONNumbers(v, "", nil) }

func nonJSONNumbers(v any, at string, out []string) []string {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			out = append(out, pointer(at)+": "+fmt.Sprint(x)+" is not a number JSON can hold; send a finite number")
		}
	case json.Number:
		switch {
		case !isJSONNumber(string(x)):
			out = append(out, pointer(at)+": "+strconv.Quote(string(x))+" is not a valid JSON number")
		case !ratNumber(string(x)):
			out = append(out, pointer(at)+": "+strconv.Quote(string(x))+" has an exponent too large to judge; send a number a float64 can hold")
		}
	case map[string]any:
		for k, e := range x {
			out = nonJSONNumbers(e, at+"/"+escapePointer(k), out)
		}
	case []any:
		for i, e := range x {
			out = nonJSONNumbers(e, at+"/"+strconv.Itoa(i), out)
		}
	}
	return out
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}

// ratNumber reports whether the validator, which reads numbers as
// big.Rat, can read s (it cannot when the exponent is beyond big.Rat's
// limit, and then dereferences nil).
func ratNumber(s string) bool {
	_, ok := new(big.Rat).SetString(s)
	return ok
}

// pointer shows a JSON pointer, "/" for the root.
func pointer(at string) string {
	if at == "" {
		return "/"
	}
	return at
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

// IsJSONValue reports whether v holds only the types encoding/json decodes
// into (and that the validator accepts).
func IsJSONValue(v any) bool {
	switch x := v.(type) {
	case nil, bool, string, float64, json.Number, int, int64:
		return true
	case map[string]any:
		for _, e := range x {
			if !IsJSONValue(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !IsJSONValue(e) {
				return false
			}
		}
		return true
	}
	return false
}
