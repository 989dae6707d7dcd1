package llmtoolkit

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// ErrSchemaTooComplex is wrapped by the error of a schema refused for its
// complexity: one above a bound on [Tool.SchemaNodes] (mcp.Connect's, for
// a server's tools), and the arguments whose validation took more than
// [MaxValidationSteps] steps.
var ErrSchemaTooComplex = errors.New("schema too complex")

// DefaultMaxSchemaNodes is the bound on [Tool.SchemaNodes] that schemas
// from outside the host (an MCP server's tools) must keep to by default.
// Hand-written tool schemas stay far below it; a schema whose references
// multiply (each level of $defs naming the one below twice, say) passes it
// within a few levels.
const DefaultMaxSchemaNodes = 20_000

// The work of validating one call's arguments with the full validator is
// bounded: the number of times a (sub)schema is applied to a part of the
// arguments may not pass ValidationSteps plus ValidationStepsPerValue for
// each JSON value in the arguments (each key's value, each element, the
// object itself). Past it the call is refused with an error wrapping
// [ErrSchemaTooComplex] and [ErrInvalidArguments]. Ordinary arguments take
// a few steps per value; a schema whose oneOf/anyOf/$ref branches multiply
// takes exponentially many, and is stopped here.
const (
	ValidationSteps         = 10_000
	ValidationStepsPerValue = 32
)

// meterCheckEvery is how many validation steps pass between two looks at
// the context.
const meterCheckEvery = 256

// SchemaNodes measures the complexity of the tool's parameter schema: the
// number of (sub)schemas it would have with every reference ($ref,
// $recursiveRef, $dynamicRef) replaced by the schema it names, a reference
// that recurses into itself counted once. A plain schema's count is the
// number of its schema objects; a schema whose levels each name the level
// below twice doubles per level. The count saturates at 1<<40. The error
// is the schema's, when it does not compile.
func (t Tool) SchemaNodes() (int, error) {
	s, err := t.compiledSchema()
	if err != nil {
		return 0, err
	}
	return schemaNodes(s), nil
}

// CheckSchemaNodes returns an error wrapping [ErrSchemaTooComplex] and
// [ErrInvalidTool], naming the tool, its [Tool.SchemaNodes] and max, when
// the schema is above max, and the schema's error when it does not
// compile.
func (t Tool) CheckSchemaNodes(max int) error {
	n, err := t.SchemaNodes()
	if err != nil {
		return err
	}
	if n > max {
		return fmt.Errorf("%w %q: %w: its parameter schema expands to %d subschemas once its references are followed, above the bound of %d; inline fewer references or use fewer oneOf/anyOf branches",
			ErrInvalidTool, t.Name, ErrSchemaTooComplex, n, max)
	}
	return nil
}

// nodesSaturation is where the count stops growing: far above any bound,
// and within an int on 32-bit platforms too.
const nodesSaturation = 1 << 30

// schemaNodes counts the expanded size of s: a depth-first walk, each
// schema's count kept once computed; a reference back to a schema on the
// walk's path counts 1.
func schemaNodes(root *jsonschema.Schema) int {
	const onPath = -1
	memo := map[*jsonschema.Schema]int{}
	var count func(s *jsonschema.Schema) int
	count = func(s *jsonschema.Schema) int {
		if s == nil {
			return 0
		}
		if n, ok := memo[s]; ok {
			if n == onPath {
				return 1
			}
			return n
		}
		memo[s] = onPath
		n := 1
		add := func(c *jsonschema.Schema) {
			n = min(n+count(c), nodesSaturation)
		}
		forEachSubschema(s, add)
		memo[s] = n
		return n
	}
	return count(root)
}

// forEachSubschema calls fn with every schema s refers to.
func forEachSubschema(s *jsonschema.Schema, fn func(*jsonschema.Schema)) {
	for _, c := range []*jsonschema.Schema{s.Ref, s.RecursiveRef, s.DynamicRef, s.Not, s.If, s.Then, s.Else,
		s.PropertyNames, s.UnevaluatedProperties, s.Items2020, s.Contains, s.UnevaluatedItems, s.ContentSchema} {
		if c != nil {
			fn(c)
		}
	}
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
		for _, c := range list {
			fn(c)
		}
	}
	for _, c := range s.Properties {
		fn(c)
	}
	for _, c := range s.PatternProperties {
		fn(c)
	}
	for _, c := range s.DependentSchemas {
		fn(c)
	}
	for _, d := range s.Dependencies {
		if c, ok := d.(*jsonschema.Schema); ok {
			fn(c)
		}
	}
	for _, v := range []any{s.AdditionalProperties, s.AdditionalItems, s.Items} {
		switch c := v.(type) {
		case *jsonschema.Schema:
			fn(c)
		case []*jsonschema.Schema:
			for _, e := range c {
				fn(e)
			}
		}
	}
}

// meteredSchema is one compiled copy of a tool's schema whose every
// subschema counts its applications on meter. A copy serves one
// validation at a time (the meter is its state); [schemaCache] keeps the
// idle ones.
type meteredSchema struct {
	schema *jsonschema.Schema
	meter  *meter
}

// meter counts the steps of the validation using its schema copy.
type meter struct {
	ctx          context.Context
	steps, limit int
}

// meterStop is what the meter panics with to stop a validation; the
// validating function recovers it into its error.
type meterStop struct{ err error }

// step counts one application of a subschema, stopping the validation past
// MaxValidationSteps or when the context has ended.
func (m *meter) step() {
	m.steps++
	if m.steps > m.limit {
		panic(meterStop{fmt.Errorf("%w: validating the arguments took more than %d steps (%d, plus %d per value of the arguments)",
			ErrSchemaTooComplex, m.limit, ValidationSteps, ValidationStepsPerValue)})
	}
	if m.steps%meterCheckEvery == 0 && m.ctx != nil {
		if err := m.ctx.Err(); err != nil {
			panic(meterStop{err})
		}
	}
}

// meterCompiler puts the meter on every subschema the compiler compiles
// (the extension is asked about every schema object, whatever its keys).
type meterCompiler struct{ m *meter }

func (mc meterCompiler) Compile(jsonschema.CompilerContext, map[string]any) (jsonschema.ExtSchema, error) {
	return meterNode(mc), nil
}

// meterNode is the meter as a keyword of one subschema.
type meterNode struct{ m *meter }

func (n meterNode) Validate(jsonschema.ValidationContext, any) error {
	n.m.step()
	return nil
}

// acquire returns an idle metered copy of the schema compiled from params,
// compiling a new one when none is idle.
func (c *schemaCache) acquire(name string, params map[string]any) (*meteredSchema, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 && sameMap(c.source, params) {
		ms := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return ms, nil
	}
	c.mu.Unlock()
	return compileMetered(name, params)
}

// maxIdleCopies bounds the idle copies a tool keeps.
const maxIdleCopies = 8

// release gives ms back for later validations.
func (c *schemaCache) release(params map[string]any, ms *meteredSchema) {
	ms.meter.ctx, ms.meter.steps, ms.meter.limit = nil, 0, 0
	c.mu.Lock()
	defer c.mu.Unlock()
	if sameMap(c.source, params) && len(c.idle) < maxIdleCopies {
		c.idle = append(c.idle, ms)
	}
}

// compileMetered compiles params with a meter of its own.
func compileMetered(name string, params map[string]any) (*meteredSchema, error) {
	m := &meter{}
	s, err := compileSchemaWith(name, params, m)
	if err != nil {
		return nil, err
	}
	return &meteredSchema{schema: s, meter: m}, nil
}

// fullValidate validates v with a metered copy of the tool's schema,
// answering when ctx ends even if the validation still runs: it then runs
// on in its goroutine, stopped by its meter within meterCheckEvery steps
// (or by its step limit, see [ValidationSteps]), never for long. A panic of the validator is
// returned as a *PanicError.
func (t Tool) fullValidate(ctx context.Context, v any) error {
	var ms *meteredSchema
	var err error
	if t.schema != nil {
		ms, err = t.schema.acquire(t.Name, t.Parameters)
	} else {
		ms, err = compileMetered(t.Name, t.Parameters)
	}
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
		ms.meter.ctx, ms.meter.limit = ctx, ValidationSteps+ValidationStepsPerValue*countValues(v)
		err = ms.schema.Validate(v)
		if t.schema != nil {
			t.schema.release(t.Parameters, ms)
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

// countValues counts the JSON values in v, v included.
func countValues(v any) int {
	n := 1
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			n += countValues(e)
		}
	case []any:
		for _, e := range x {
			n += countValues(e)
		}
	}
	return n
}
