package schema

import (
	"encoding/json"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// fastSchema decides validity, without allocating, for the subset of JSON
// Schema that tool definitions nearly always use (type, properties,
// required, enum, numeric and length bounds, items,
// additionalProperties). A schema using anything else compiles to nil and
// only the full validator is used. When a value fails, the full validator
// runs too, to produce its complete message: the fast path only makes the
// common case (valid arguments) cheap.
type fastSchema struct {
	types                    uint8 // bit set of fastType; 0: any type
	properties               map[string]*fastSchema
	required                 []string
	additional               *fastSchema // nil: any additional property is allowed
	noExtra                  bool        // additionalProperties: false
	items                    *fastSchema
	enum                     []any // scalars only
	minimum, maximum         float64
	exclMinimum, exclMaximum float64
	minLength, maxLength     int
	minItems, maxItems       int
	format                   func(any) bool // nil: not asserted (or unknown)
}

const (
	fastNull uint8 = 1 << iota
	fastBool
	fastInteger
	fastNumber
	fastString
	fastArray
	fastObject
)

var fastTypeBits = map[string]uint8{
	"null": fastNull, "boolean": fastBool, "integer": fastInteger, "number": fastNumber | fastInteger,
	"string": fastString, "array": fastArray, "object": fastObject,
}

// annotationKeywords have no effect on validation.
var annotationKeywords = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// formatAssertedBy says, for each "$schema" the fast path knows, whether the
// full validator asserts "format" under it: it does for the drafts before
// 2019-09 (and without "$schema", as for draft 7), and treats it as an
// annotation for 2019-09 and 2020-12. A schema naming another dialect is
// left to the full validator.
var formatAssertedBy = map[string]bool{
	"http://json-schema.org/draft-04/schema":       true,
	"http://json-schema.org/draft-06/schema":       true,
	"http://json-schema.org/draft-07/schema":       true,
	"https://json-schema.org/draft/2019-09/schema": false,
	"https://json-schema.org/draft/2020-12/schema": false,
}

// compileFast returns the fast form of schema, or nil if it uses a keyword
// outside the subset. "format" is checked with the very functions the full
// validator uses (jsonschema.Formats), under the same rule for when it is
// asserted, so that both paths always agree.
func compileFast(schema map[string]any) *fastSchema {
	assertFormat := true
	if v, ok := schema["$schema"]; ok {
		s, _ := v.(string)
		asserted, known := formatAssertedBy[strings.TrimSuffix(s, "#")]
		if !known {
			return nil
		}
		assertFormat = asserted
	}
	return compileFastIn(schema, assertFormat, true)
}

// compileFastIn compiles one (sub)schema; top allows "$schema".
func compileFastIn(schema map[string]any, assertFormat, top bool) *fastSchema {
	f := &fastSchema{
		minimum: math.Inf(-1), maximum: math.Inf(1), exclMinimum: math.Inf(-1), exclMaximum: math.Inf(1),
		maxLength: -1, maxItems: -1,
	}
	for key, v := range schema {
		switch {
		case annotationKeywords[key]:
		case key == "$schema" && top:
		case key == "format":
			name, ok := v.(string)
			if !ok {
				return nil
			}
			if assertFormat {
				f.format = jsonschema.Formats[name] // nil for an unknown format, ignored by both paths
			}
		case key == "type":
			switch t := v.(type) {
			case string:
				bits, ok := fastTypeBits[t]
				if !ok {
					return nil
				}
				f.types = bits
			case []any:
				for _, e := range t {
					s, _ := e.(string)
					bits, ok := fastTypeBits[s]
					if !ok {
						return nil
					}
					f.types |= bits
				}
			case []string:
				for _, s := range t {
					bits, ok := fastTypeBits[s]
					if !ok {
						return nil
					}
					f.types |= bits
				}
			default:
				return nil
			}
		case key == "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			f.properties = make(map[string]*fastSchema, len(props))
			for name, ps := range props {
				pm, ok := ps.(map[string]any)
				if !ok {
					return nil
				}
				if f.properties[name] = compileFastIn(pm, assertFormat, false); f.properties[name] == nil {
					return nil
				}
			}
		case key == "required":
			switch r := v.(type) {
			case []any:
				for _, e := range r {
					s, ok := e.(string)
					if !ok {
						return nil
					}
					f.required = append(f.required, s)
				}
			case []string:
				f.required = append(f.required, r...)
			default:
				return nil
			}
		case key == "additionalProperties":
			switch a := v.(type) {
			case bool:
				f.noExtra = !a
			case map[string]any:
				if f.additional = compileFastIn(a, assertFormat, false); f.additional == nil {
					return nil
				}
			default:
				return nil
			}
		case key == "items":
			im, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			if f.items = compileFastIn(im, assertFormat, false); f.items == nil {
				return nil
			}
		case key == "enum":
			values, ok := v.([]any)
			if !ok {
				return nil
			}
			f.enum = make([]any, len(values))
			for i, e := range values {
				switch x := e.(type) {
				case nil, bool, string:
					f.enum[i] = x
				default:
					n, ok := schemaNumber(x)
					if !ok {
						return nil
					}
					f.enum[i] = n
				}
			}
		case key == "minimum", key == "maximum", key == "exclusiveMinimum", key == "exclusiveMaximum":
			n, ok := schemaNumber(v)
			if !ok {
				return nil
			}
			switch key {
			case "minimum":
				f.minimum = n
			case "maximum":
				f.maximum = n
			case "exclusiveMinimum":
				f.exclMinimum = n
			default:
				f.exclMaximum = n
			}
		case key == "minLength", key == "maxLength", key == "minItems", key == "maxItems":
			n, ok := schemaNumber(v)
			if !ok || n < 0 || n != math.Trunc(n) || n > math.MaxInt32 {
				return nil
			}
			switch key {
			case "minLength":
				f.minLength = int(n)
			case "maxLength":
				f.maxLength = int(n)
			case "minItems":
				f.minItems = int(n)
			default:
				f.maxItems = int(n)
			}
		default:
			return nil
		}
	}
	return f
}

// valid reports whether v satisfies the schema. ok is false when v holds a
// value the fast path does not judge (the full validator decides).
func (f *fastSchema) valid(v any) (valid, ok bool) {
	var typ uint8
	var num float64
	isNum := false
	switch x := v.(type) {
	case nil:
		typ = fastNull
	case bool:
		typ = fastBool
	case string:
		typ = fastString
	case float64:
		num, isNum = x, true
	case int:
		num, isNum = float64(x), true
	case int64:
		num, isNum = float64(x), true
	case []any:
		typ = fastArray
	case map[string]any:
		typ = fastObject
	case json.Number:
		return false, false
	default:
		return false, false
	}
	if isNum {
		if math.IsInf(num, 0) || math.IsNaN(num) || math.Abs(num) > 1<<53 {
			return false, false // leave precision questions to the full validator
		}
		typ = fastNumber
		if num == math.Trunc(num) {
			typ = fastInteger
		}
	}
	if f.types != 0 && f.types&typ == 0 {
		return false, true
	}
	if f.format != nil && !f.format(v) {
		return false, true
	}
	if len(f.enum) > 0 {
		found := false
		for _, e := range f.enum {
			if enumEqual(e, v, num, isNum) {
				found = true
				break
			}
		}
		if !found {
			return false, true
		}
	}
	switch {
	case isNum:
		if num < f.minimum || num > f.maximum || num <= f.exclMinimum || num >= f.exclMaximum {
			return false, true
		}
	case typ == fastString:
		if f.minLength > 0 || f.maxLength >= 0 {
			n := utf8.RuneCountInString(v.(string))
			if n < f.minLength || (f.maxLength >= 0 && n > f.maxLength) {
				return false, true
			}
		}
	case typ == fastArray:
		arr := v.([]any)
		if len(arr) < f.minItems || (f.maxItems >= 0 && len(arr) > f.maxItems) {
			return false, true
		}
		if f.items != nil {
			for _, e := range arr {
				if valid, ok := f.items.valid(e); !valid || !ok {
					return valid, ok
				}
			}
		}
	case typ == fastObject:
		obj := v.(map[string]any)
		for _, name := range f.required {
			if _, present := obj[name]; !present {
				return false, true
			}
		}
		for name, pv := range obj {
			ps, declared := f.properties[name]
			switch {
			case declared:
			case f.noExtra:
				return false, true
			case f.additional != nil:
				ps = f.additional
			default:
				continue
			}
			if valid, ok := ps.valid(pv); !valid || !ok {
				return valid, ok
			}
		}
	}
	return true, true
}

// schemaNumber reads a number in a schema, as decoded from JSON (float64)
// or written in Go (int, int64).
func schemaNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func enumEqual(e, v any, num float64, isNum bool) bool {
	if isNum {
		n, ok := e.(float64)
		return ok && n == num
	}
	switch x := v.(type) {
	case nil:
		return e == nil
	case bool:
		b, ok := e.(bool)
		return ok && b == x
	case string:
		s, ok := e.(string)
		return ok && s == x
	}
	return false
}
