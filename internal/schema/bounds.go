package schema

import (
	"context"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// ErrTooComplex is wrapped by the error of a validation stopped past its
// steps (the root exports it as llmtoolkit.ErrSchemaTooComplex).
var ErrTooComplex = errors.New("schema too complex")

// The work of validating one call's arguments with the full validator is
// bounded: the number of times a (sub)schema is applied to a part of the
// arguments may not pass Steps plus StepsPerValue for
// each JSON value in the arguments (each key's value, each element, the
// object itself). Past it the call is refused with an error wrapping
// [ErrTooComplex]. Ordinary arguments take a few steps per value; a
// schema whose oneOf/anyOf/$ref branches multiply takes exponentially
// many, and is stopped here.
const (
	Steps         = 10_000
	StepsPerValue = 32
)

// meterCheckEvery is how many validation steps pass between two looks at
// the context.
const meterCheckEvery = 256

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
// validation at a time (the meter is its state); [Schema] keeps the idle
// ones.
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
// the step limit or when the context has ended.
func (m *meter) step() {
	m.steps++
	if m.steps > m.limit {
		panic(meterStop{fmt.Errorf("%w: validating the arguments took more than %d steps (%d, plus %d per value of the arguments)",
			ErrTooComplex, m.limit, Steps, StepsPerValue)})
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
