package agentresolver

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// nodeKind is how a Go type is described and decoded.
type nodeKind uint8

const (
	kindString  nodeKind = iota // string kinds
	kindBool                    // bool
	kindInt                     // signed integers
	kindUint                    // unsigned integers
	kindFloat                   // float32, float64
	kindStruct                  // struct: an object with properties
	kindMap                     // map with string keys: an object with additionalProperties
	kindSlice                   // slice: an array
	kindArray                   // array: an array of fixed length
	kindPointer                 // pointer: the element's schema
	kindAny                     // empty interface: any JSON value
	kindTime                    // time.Time: an RFC 3339 date-time string
	kindBytes                   // []byte: a base64 string, as encoding/json has it
	kindText                    // encoding.TextUnmarshaler: a string
	kindJSON                    // json.Unmarshaler: any JSON value, the type decides
)

// node is the plan for one value: its schema and how to check and decode
// it. Nodes form a tree (recursive types are refused), built once per
// [Func] and never modified afterwards.
type node struct {
	kind     nodeKind
	typ      reflect.Type
	elem     *node   // slice, array, map value, pointer target
	fields   []field // struct
	enum     []any   // allowed values, as JSON values (string or float64)
	enumText string  // enum for messages: "a", "b"
	min, max float64 // integer bounds, when hasMin/hasMax
	hasMin   bool
	hasMax   bool
	direct   bool // slice or map whose Go type is the JSON one ([]any, map[string]any): assigned as is
}

// field is one property of a struct.
type field struct {
	name        string
	index       []int
	node        *node
	required    bool
	description string
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	anySliceType    = reflect.TypeFor[[]any]()
	anyMapType      = reflect.TypeFor[map[string]any]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// The tag names read on struct fields. "json" gives the property name and
// omitempty/omitzero (optional); "jsonschema" the description, as in
// github.com/google/jsonschema-go; "jsonschema_enum" the allowed values.
const (
	tagDescription = "jsonschema"
	tagEnum        = "jsonschema_enum"
)

// disallowedPrefix is refused at the start of a description, as
// github.com/google/jsonschema-go does, so the same structs work with both.
var disallowedPrefix = regexp.MustCompile(`^[^ \t\n]*=`)

// builder walks a type into a plan.
type builder struct {
	visiting map[reflect.Type]bool
}

// planFor builds the plan of an arguments type: a struct, or a pointer to
// one.
func planFor(t reflect.Type) (*node, error) {
	b := &builder{visiting: map[reflect.Type]bool{}}
	base := t
	if base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct || base == timeType {
		return nil, fmt.Errorf("arguments type %s must be a struct (tool arguments are a JSON object); use a Handler for free-form arguments", t)
	}
	return b.build(t, "")
}

// build returns the plan of t; path names the field for errors.
func (b *builder) build(t reflect.Type, path string) (*node, error) {
	where := func() string {
		if path == "" {
			return t.String()
		}
		return fmt.Sprintf("field %s (%s)", path, t)
	}
	if b.visiting[t] {
		return nil, fmt.Errorf("%s: type %s contains itself; tool arguments must be a finite tree (limit the depth with distinct types, or use map[string]any)", where(), t)
	}
	b.visiting[t] = true
	defer delete(b.visiting, t)

	n := &node{typ: t}
	switch {
	case t == timeType:
		n.kind = kindTime
		return n, nil
	case t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && reflect.PointerTo(t).Implements(textUnmarshaler):
		n.kind = kindText
		return n, nil
	case t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && reflect.PointerTo(t).Implements(jsonUnmarshaler):
		n.kind = kindJSON
		return n, nil
	}
	switch t.Kind() {
	case reflect.String:
		n.kind = kindString
	case reflect.Bool:
		n.kind = kindBool
	case reflect.Int, reflect.Int64:
		n.kind = kindInt
	case reflect.Int8, reflect.Int16, reflect.Int32:
		n.kind = kindInt
		bits := t.Bits()
		n.min, n.max = -math.Exp2(float64(bits-1)), math.Exp2(float64(bits-1))-1
		n.hasMin, n.hasMax = true, true
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		n.kind = kindUint
		n.hasMin = true
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		n.kind = kindUint
		n.max = math.Exp2(float64(t.Bits())) - 1
		n.hasMin, n.hasMax = true, true
	case reflect.Float32, reflect.Float64:
		n.kind = kindFloat
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return nil, fmt.Errorf("%s: interface with methods cannot be decoded from JSON; use a concrete type or any", where())
		}
		n.kind = kindAny
	case reflect.Pointer:
		n.kind = kindPointer
		if t.Elem().Kind() == reflect.Pointer {
			return nil, fmt.Errorf("%s: pointer to pointer is not supported; use a single pointer", where())
		}
		e, err := b.build(t.Elem(), path)
		if err != nil {
			return nil, err
		}
		n.elem = e
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(textUnmarshaler) && !reflect.PointerTo(t.Elem()).Implements(jsonUnmarshaler) {
			n.kind = kindBytes
			return n, nil
		}
		n.kind = kindSlice
		n.direct = t == anySliceType
		e, err := b.build(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		n.elem = e
	case reflect.Array:
		n.kind = kindArray
		e, err := b.build(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		n.elem = e
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: map keys must be strings (JSON object keys), got %s", where(), t.Key())
		}
		n.kind = kindMap
		n.direct = t == anyMapType
		e, err := b.build(t.Elem(), path+"{}")
		if err != nil {
			return nil, err
		}
		n.elem = e
	case reflect.Struct:
		n.kind = kindStruct
		fields, err := b.structFields(t, path)
		if err != nil {
			return nil, err
		}
		n.fields = fields
	default:
		return nil, fmt.Errorf("%s: %s values cannot be tool arguments (no JSON form)", where(), t.Kind())
	}
	return n, nil
}

// candidate is a struct field before name conflicts are settled.
type candidate struct {
	sf     reflect.StructField
	name   string
	tagged bool
	index  []int
	opts   string
}

// structFields lists the properties of struct t, following encoding/json:
// the json tag names them ("-" skips), embedded structs without a tag name
// are flattened, a shallower field hides a deeper one of the same name.
func (b *builder) structFields(t reflect.Type, path string) ([]field, error) {
	var cands []candidate
	var collect func(t reflect.Type, prefix []int) error
	collect = func(t reflect.Type, prefix []int) error {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			index := append(append([]int(nil), prefix...), i)
			if sf.Anonymous && name == "" {
				ft := sf.Type
				if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
					return fmt.Errorf("field %s: embedded pointer %s is not supported; embed the struct by value", joinPath(path, sf.Name), ft)
				}
				if ft.Kind() == reflect.Struct && ft != timeType &&
					!reflect.PointerTo(ft).Implements(textUnmarshaler) && !reflect.PointerTo(ft).Implements(jsonUnmarshaler) {
					if err := collect(ft, index); err != nil {
						return err
					}
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			c := candidate{sf: sf, name: name, tagged: name != "", index: index, opts: opts}
			if c.name == "" {
				c.name = sf.Name
			}
			cands = append(cands, c)
		}
		return nil
	}
	if err := collect(t, nil); err != nil {
		return nil, err
	}

	// Settle conflicts: the shallowest field wins; at equal depth a tagged
	// one wins; two of the same standing are ambiguous.
	best := map[string]int{} // name -> position in cands
	for i, c := range cands {
		j, seen := best[c.name]
		if !seen {
			best[c.name] = i
			continue
		}
		o := cands[j]
		switch {
		case len(c.index) < len(o.index), len(c.index) == len(o.index) && c.tagged && !o.tagged:
			best[c.name] = i
		case len(c.index) == len(o.index) && c.tagged == o.tagged:
			return nil, fmt.Errorf("struct %s: fields %s and %s both have the JSON name %q; rename one with a json tag", t, o.sf.Name, c.sf.Name, c.name)
		}
	}

	var fields []field
	for i, c := range cands {
		if best[c.name] != i {
			continue
		}
		fpath := joinPath(path, c.sf.Name)
		var required = true
		for _, o := range strings.Split(c.opts, ",") {
			switch o {
			case "omitempty", "omitzero":
				required = false
			case "string":
				return nil, fmt.Errorf("field %s: the json ,string option is not supported; use the field's own type", fpath)
			}
		}
		fn, err := b.build(c.sf.Type, fpath)
		if err != nil {
			return nil, err
		}
		f := field{name: c.name, index: c.index, node: fn, required: required}
		if d, ok := c.sf.Tag.Lookup(tagDescription); ok {
			if d == "" {
				return nil, fmt.Errorf("field %s: empty %s tag; write the description or remove the tag", fpath, tagDescription)
			}
			if disallowedPrefix.MatchString(d) {
				return nil, fmt.Errorf("field %s: %s tag %q must not begin with WORD= (reserved by github.com/google/jsonschema-go)", fpath, tagDescription, d)
			}
			f.description = d
		}
		if e, ok := c.sf.Tag.Lookup(tagEnum); ok {
			if err := setEnum(fn, e, fpath); err != nil {
				return nil, err
			}
		}
		fields = append(fields, f)
	}
	return fields, nil
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// setEnum parses a jsonschema_enum tag ("a,b,c", spaces around values
// trimmed) onto the scalar at the end of n's pointers, slices and arrays.
func setEnum(n *node, tag, path string) error {
	for n.kind == kindPointer || n.kind == kindSlice || n.kind == kindArray {
		n = n.elem
	}
	if strings.TrimSpace(tag) == "" {
		return fmt.Errorf("field %s: empty %s tag; list the allowed values separated by commas", path, tagEnum)
	}
	parts := strings.Split(tag, ",")
	quoted := make([]string, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		switch n.kind {
		case kindString, kindText:
			n.enum = append(n.enum, p)
		case kindInt, kindUint:
			v, err := strconv.ParseInt(p, 10, 64)
			if err != nil || (n.kind == kindUint && v < 0) || (n.hasMin && float64(v) < n.min) || (n.hasMax && float64(v) > n.max) {
				return fmt.Errorf("field %s: %s value %q is not a valid %s", path, tagEnum, p, n.typ)
			}
			n.enum = append(n.enum, float64(v))
		case kindFloat:
			v, err := strconv.ParseFloat(p, 64)
			if err != nil {
				return fmt.Errorf("field %s: %s value %q is not a number", path, tagEnum, p)
			}
			n.enum = append(n.enum, v)
		default:
			return fmt.Errorf("field %s: %s applies to string, integer and number fields (or slices of them), not %s", path, tagEnum, n.typ)
		}
		quoted = append(quoted, strconv.Quote(p))
	}
	n.enumText = strings.Join(quoted, ", ")
	return nil
}

// schema returns n's JSON Schema as a JSON-shaped value (maps, []any,
// strings, float64): no $ref, no boolean sub-schemas, "properties" on every
// object.
func (n *node) schema() map[string]any {
	s := map[string]any{}
	switch n.kind {
	case kindString, kindText:
		s["type"] = "string"
	case kindBool:
		s["type"] = "boolean"
	case kindInt, kindUint:
		s["type"] = "integer"
		if n.hasMin {
			s["minimum"] = n.min
		}
		if n.hasMax {
			s["maximum"] = n.max
		}
	case kindFloat:
		s["type"] = "number"
	case kindTime:
		s["type"] = "string"
		s["format"] = "date-time"
	case kindBytes:
		s["type"] = "string"
		s["contentEncoding"] = "base64"
	case kindAny, kindJSON:
		// any JSON value
	case kindPointer:
		return n.elem.schema()
	case kindSlice:
		s["type"] = "array"
		s["items"] = n.elem.schema()
	case kindArray:
		s["type"] = "array"
		s["items"] = n.elem.schema()
		s["minItems"] = float64(n.typ.Len())
		s["maxItems"] = float64(n.typ.Len())
	case kindMap:
		s["type"] = "object"
		s["properties"] = map[string]any{}
		s["additionalProperties"] = n.elem.schema()
	case kindStruct:
		s["type"] = "object"
		props := make(map[string]any, len(n.fields))
		var required []any
		for _, f := range n.fields {
			ps := f.node.schema()
			if f.description != "" {
				ps["description"] = f.description
			}
			props[f.name] = ps
			if f.required {
				required = append(required, f.name)
			}
		}
		s["properties"] = props
		if len(required) > 0 {
			s["required"] = required
		}
	}
	if len(n.enum) > 0 {
		s["enum"] = append([]any(nil), n.enum...)
	}
	return s
}
