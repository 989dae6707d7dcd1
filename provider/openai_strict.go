package provider

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/jsonptr"
)

// ErrNotStrict is wrapped by the errors of [OpenAIStrictSchema]: the schema
// cannot be made strict-compatible without changing what it accepts. The
// message names the place (a JSON pointer) and the reason.
var ErrNotStrict = errors.New("provider: the schema cannot be made strict")

// Limits of OpenAI's strict mode, as documented.
const (
	strictMaxDepth      = 10
	strictMaxProperties = 5000
	strictMaxEnum       = 1000
)

// strictKeys are the keywords strict mode accepts and that are copied as
// they are (type, properties, required, items, anyOf, $ref, $defs and
// additionalProperties are handled on their own).
var strictKeys = []string{
	"title", "description", "enum", "const", "pattern",
	"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
	"minItems", "maxItems",
}

// strictFormats are the string formats strict mode accepts.
var strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}

// strictSilent are keywords dropped without a note: they do not constrain
// the value.
var strictSilent = []string{"$schema", "$id", "$comment", "default", "examples", "example", "readOnly", "writeOnly", "deprecated"}

// OpenAIStrictSchema converts a tool's parameters to a schema that OpenAI's
// strict mode ("strict": true, in Chat Completions and in the Responses
// API) accepts, or says why it cannot. It returns a new map and never
// modifies schema.
//
//   - Every object gets "additionalProperties": false and lists every
//     property in "required"; a property that was optional becomes
//     nullable (a "null" type, a null enum value, or an anyOf with
//     {"type": "null"}), so the model sends null where it would have left
//     the property out. [OpenAIStrictArguments] turns those nulls back into
//     absent properties before the arguments are validated.
//   - oneOf becomes anyOf; local $ref and $defs/definitions are kept (strict
//     mode resolves them), their definitions converted too.
//   - Keywords strict mode does not take (minLength, maxLength, uniqueItems,
//     formats other than date-time, time, date, duration, email, hostname,
//     ipv4, ipv6 and uuid, not, if/then/else, ...) are dropped and named in
//     the description; the full schema still validates the call in
//     [llmtoolkit.Execute]. $schema, default and examples are dropped.
//
// It cannot (an error wrapping [ErrNotStrict] that names the place) for: a
// root that is not an object; an object open to other keys
// (additionalProperties true or a schema, patternProperties, or no
// properties at all); a schema without a type (any value); an array without
// items or with tuple items; allOf; a reference outside the schema; more
// than 10 levels of nesting, 5000 properties or 1000 enum values.
func OpenAIStrictSchema(schema map[string]any) (map[string]any, error) {
	if schema == nil {
		schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	if t, _ := schema["type"].(string); t != "object" && (schema["type"] != nil || schema["properties"] == nil) {
		return nil, fmt.Errorf("%w: at the root: the parameters must be an object schema (\"type\": \"object\")", ErrNotStrict)
	}
	c := &strictConverter{root: schema}
	out, err := c.convert(schema, "", 0)
	if err != nil {
		return nil, err
	}
	for _, key := range []string{"$defs", "definitions"} {
		defs, ok := schema[key].(map[string]any)
		if !ok {
			continue
		}
		cd := make(map[string]any, len(defs))
		for name, d := range defs {
			dm, ok := d.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%w: at /%s/%s: a definition must be a schema object", ErrNotStrict, key, name)
			}
			conv, err := c.convert(dm, "/"+key+"/"+name, 1)
			if err != nil {
				return nil, err
			}
			cd[name] = conv
		}
		out[key] = cd
	}
	return out, nil
}

type strictConverter struct {
	root       map[string]any
	properties int
}

func (c *strictConverter) convert(s map[string]any, path string, depth int) (map[string]any, error) {
	at := path
	if at == "" {
		at = "the root"
	}
	if depth > strictMaxDepth {
		return nil, fmt.Errorf("%w: at %s: nested more than %d levels deep", ErrNotStrict, at, strictMaxDepth)
	}
	if ref, ok := s["$ref"].(string); ok {
		if ref != "#" && !strings.HasPrefix(ref, "#/") {
			return nil, fmt.Errorf("%w: at %s: the reference %q is outside the schema; inline it", ErrNotStrict, at, ref)
		}
		out := map[string]any{"$ref": ref}
		if d, ok := s["description"]; ok {
			out["description"] = d
		}
		return out, nil
	}
	for _, k := range []string{"allOf", "patternProperties"} {
		if _, ok := s[k]; ok {
			return nil, fmt.Errorf("%w: at %s: %s is not supported in strict mode", ErrNotStrict, at, k)
		}
	}
	out := map[string]any{}
	var notes []string
	for _, k := range strictKeys {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	if enum, ok := out["enum"].([]any); ok && len(enum) > strictMaxEnum {
		return nil, fmt.Errorf("%w: at %s: %d enum values; strict mode takes at most %d", ErrNotStrict, at, len(enum), strictMaxEnum)
	}
	for k, v := range s {
		switch {
		case slices.Contains(strictKeys, k), slices.Contains(strictSilent, k):
		case k == "type", k == "properties", k == "required", k == "additionalProperties", k == "items",
			k == "anyOf", k == "oneOf", k == "$defs", k == "definitions", k == "format":
		default:
			notes = append(notes, fmt.Sprintf("%s: %s", k, compactJSON(v)))
		}
	}
	if f, ok := s["format"].(string); ok {
		if slices.Contains(strictFormats, f) {
			out["format"] = f
		} else {
			notes = append(notes, "format: "+f)
		}
	}

	var branches []any
	for _, k := range []string{"anyOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			branches = append(branches, list...)
		}
	}
	if len(branches) > 0 {
		conv := make([]any, 0, len(branches))
		for i, b := range branches {
			bm, ok := b.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%w: at %s/anyOf/%d: a branch must be a schema object", ErrNotStrict, path, i)
			}
			cb, err := c.convert(bm, fmt.Sprintf("%s/anyOf/%d", path, i), depth+1)
			if err != nil {
				return nil, err
			}
			conv = append(conv, cb)
		}
		out["anyOf"] = conv
	}

	typ := s["type"]
	if typ == nil {
		switch {
		case s["properties"] != nil:
			typ = "object"
		case len(branches) > 0, s["enum"] != nil, s["const"] != nil:
		default:
			return nil, fmt.Errorf("%w: at %s: the schema has no type (it accepts any value); give it one", ErrNotStrict, at)
		}
	}
	if typ != nil {
		out["type"] = typ
	}
	if hasType(typ, "object") {
		if err := c.object(s, out, path, at, depth); err != nil {
			return nil, err
		}
	}
	if hasType(typ, "array") {
		switch items := s["items"].(type) {
		case map[string]any:
			ci, err := c.convert(items, path+"/items", depth+1)
			if err != nil {
				return nil, err
			}
			out["items"] = ci
		case nil:
			return nil, fmt.Errorf("%w: at %s: an array needs \"items\" in strict mode", ErrNotStrict, at)
		default:
			return nil, fmt.Errorf("%w: at %s: tuple items are not supported in strict mode", ErrNotStrict, at)
		}
	}
	if len(notes) > 0 {
		slices.Sort(notes)
		desc, _ := out["description"].(string)
		note := "Constraints: " + strings.Join(notes, "; ") + "."
		if desc != "" {
			note = desc + " " + note
		}
		out["description"] = note
	}
	return out, nil
}

// object converts the object part of s into out.
func (c *strictConverter) object(s, out map[string]any, path, at string, depth int) error {
	switch ap := s["additionalProperties"].(type) {
	case nil:
	case bool:
		if ap {
			return fmt.Errorf("%w: at %s: the object takes other keys (additionalProperties true); strict mode needs a fixed set of properties", ErrNotStrict, at)
		}
	default:
		return fmt.Errorf("%w: at %s: the object is a map (additionalProperties is a schema); strict mode needs a fixed set of properties", ErrNotStrict, at)
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil && path != "" && s["additionalProperties"] == nil {
		return fmt.Errorf("%w: at %s: the object has no properties (it takes any keys); strict mode needs a fixed set of properties", ErrNotStrict, at)
	}
	c.properties += len(props)
	if c.properties > strictMaxProperties {
		return fmt.Errorf("%w: at %s: more than %d properties in all", ErrNotStrict, at, strictMaxProperties)
	}
	required := map[string]bool{}
	for _, name := range requiredIn(s["required"], props) {
		required[name.(string)] = true
	}
	names := slices.Sorted(maps.Keys(props))
	cp := make(map[string]any, len(props))
	for _, name := range names {
		pm, ok := props[name].(map[string]any)
		if !ok {
			return fmt.Errorf("%w: at %s/properties/%s: a property must be a schema object (true accepts any value)", ErrNotStrict, path, name)
		}
		conv, err := c.convert(pm, path+"/properties/"+name, depth+1)
		if err != nil {
			return err
		}
		if !required[name] {
			conv = nullable(conv)
		}
		cp[name] = conv
	}
	out["properties"] = cp
	req := make([]any, len(names))
	for i, n := range names {
		req[i] = n
	}
	out["required"] = req
	out["additionalProperties"] = false
	return nil
}

// nullable returns s accepting null too.
func nullable(s map[string]any) map[string]any {
	if acceptsNull(s) {
		return s
	}
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		s["type"] = append(slices.Clip(t), "null")
	default:
		if _, isRef := s["$ref"]; isRef || s["anyOf"] != nil {
			desc, hasDesc := s["description"]
			delete(s, "description")
			w := map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
			if hasDesc {
				w["description"] = desc
			}
			return w
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		s["enum"] = append(slices.Clip(enum), nil)
	}
	if v, ok := s["const"]; ok {
		delete(s, "const")
		s["enum"] = []any{v, nil}
	}
	return s
}

// acceptsNull reports whether a (converted) schema already accepts null.
func acceptsNull(s map[string]any) bool {
	if hasType(s["type"], "null") {
		return true
	}
	if list, ok := s["anyOf"].([]any); ok {
		for _, b := range list {
			if bm, ok := b.(map[string]any); ok && hasType(bm["type"], "null") {
				return true
			}
		}
	}
	return false
}

// hasType reports whether a "type" value (a name or a list) includes name.
func hasType(typ any, name string) bool {
	switch t := typ.(type) {
	case string:
		return t == name
	case []any:
		return slices.Contains(t, any(name))
	case []string:
		return slices.Contains(t, name)
	}
	return false
}

// OpenAIStrictTool converts a tool to a Chat Completions tool with
// "strict": true and its parameters converted by [OpenAIStrictSchema], or
// says why it cannot (an error wrapping [ErrNotStrict] that names the
// tool); a host then sends the tool from [OpenAITools] instead.
func OpenAIStrictTool(t llmtoolkit.Tool) (OpenAITool, error) {
	params, err := OpenAIStrictSchema(t.Parameters)
	if err != nil {
		return OpenAITool{}, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	strict := true
	return OpenAITool{Type: "function", Function: OpenAIFunction{Name: t.Name, Description: t.Description, Parameters: params, Strict: &strict}}, nil
}

// OpenAIResponsesStrictTool converts a tool to a Responses API tool with
// "strict": true and its parameters converted by [OpenAIStrictSchema], or
// says why it cannot (an error wrapping [ErrNotStrict] that names the
// tool); a host then sends the tool from [OpenAIResponsesTools] instead.
func OpenAIResponsesStrictTool(t llmtoolkit.Tool) (OpenAIResponsesTool, error) {
	params, err := OpenAIStrictSchema(t.Parameters)
	if err != nil {
		return OpenAIResponsesTool{}, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	return OpenAIResponsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params, Strict: true}, nil
}

// OpenAIStrictArguments undoes what strict mode does to optional
// properties: given the tool's original schema and the arguments of a call
// made under [OpenAIStrictSchema], it returns the arguments without the
// null values of properties that were optional and do not accept null, at
// any depth, so that they validate against the original schema. args is
// not modified.
func OpenAIStrictArguments(schema, args map[string]any) map[string]any {
	if args == nil {
		return args
	}
	out, _ := stripNulls(schema, schema, args, 0).(map[string]any)
	return out
}

func stripNulls(root, s map[string]any, v any, depth int) any {
	if s == nil || depth > maxSchemaDepth {
		return v
	}
	if ref, ok := s["$ref"].(string); ok {
		if target, ok := jsonptr.Resolve(root, ref); ok {
			return stripNulls(root, target, v, depth+1)
		}
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			return x
		}
		required := map[string]bool{}
		for _, name := range requiredIn(s["required"], props) {
			required[name.(string)] = true
		}
		out := make(map[string]any, len(x))
		for k, val := range x {
			ps, _ := props[k].(map[string]any)
			if val == nil && !required[k] && ps != nil && !schemaAcceptsNull(root, ps, 0) {
				continue
			}
			out[k] = stripNulls(root, ps, val, depth+1)
		}
		return out
	case []any:
		items, _ := s["items"].(map[string]any)
		if items == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripNulls(root, items, e, depth+1)
		}
		return out
	}
	return v
}

// schemaAcceptsNull reports whether an original schema accepts null.
func schemaAcceptsNull(root, s map[string]any, depth int) bool {
	if depth > maxSchemaDepth {
		return false
	}
	if ref, ok := s["$ref"].(string); ok {
		target, ok := jsonptr.Resolve(root, ref)
		return ok && schemaAcceptsNull(root, target, depth+1)
	}
	if hasType(s["type"], "null") || s["nullable"] == true {
		return true
	}
	if enum, ok := s["enum"].([]any); ok && slices.Contains(enum, nil) {
		return true
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			for _, b := range list {
				if bm, ok := b.(map[string]any); ok && schemaAcceptsNull(root, bm, depth+1) {
					return true
				}
			}
		}
	}
	return false
}
