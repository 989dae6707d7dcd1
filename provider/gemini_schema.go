package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmtoolkit/llmtoolkit/internal/jsonptr"
)

// geminiKeys are the JSON Schema keywords Gemini's Schema object accepts
// and that are copied as they are.
var geminiKeys = []string{
	"title", "description", "nullable", "minimum", "maximum", "minItems", "maxItems",
	"minLength", "maxLength", "pattern", "minProperties", "maxProperties", "default",
	"example", "propertyOrdering",
}

// geminiFormats are the formats Gemini accepts, by type.
var geminiFormats = map[string][]string{
	"string":  {"enum", "date-time"},
	"number":  {"float", "double"},
	"integer": {"int32", "int64"},
}

// maxSchemaDepth bounds the expansion of nested and referenced schemas.
const maxSchemaDepth = 32

// GeminiSchema converts a JSON Schema to the subset Gemini's function
// declarations accept (an OpenAPI 3.0 style Schema). It returns a new map
// and never modifies schema.
//
//   - Keywords Gemini does not know are dropped: $schema, $id, $comment,
//     additionalProperties, patternProperties, not, if/then/else,
//     exclusiveMinimum, multipleOf, uniqueItems, ...
//   - Local references ("#/$defs/X", "#/definitions/X", any "#/..." pointer)
//     are inlined; a recursive reference becomes an object described as
//     recursive.
//   - Types are written in the spelling of Gemini's Type enum, as the
//     official SDK writes them: "OBJECT", "STRING", "NUMBER", "INTEGER",
//     "BOOLEAN", "ARRAY". A schema with properties but no type is an
//     OBJECT, one with items but no type an ARRAY; a type Gemini has no
//     name for is named in the description and inferred the same way. A
//     typed schema keeps only its own type's keywords (no items on a
//     STRING, no properties on an ARRAY).
//   - A type list such as ["string", "null"] becomes "type": "STRING" with
//     "nullable": true; several non-null types become an anyOf whose
//     branches each keep only their own type's keywords. oneOf becomes
//     anyOf; a {"type": "null"} branch becomes "nullable". allOf is merged
//     into one schema.
//   - An array without items (any items, in JSON Schema) gets STRING items,
//     since Gemini requires items, and says so in its description.
//   - "const" becomes a one-value "enum". Gemini takes enums of strings
//     only: other enums are dropped and their values listed in the
//     description.
//   - Formats Gemini does not accept (email, uri, ...) are dropped and named
//     in the description.
//   - "required" keeps only names that are in "properties"; an empty
//     "properties" is dropped.
func GeminiSchema(schema map[string]any) map[string]any {
	c := &geminiConverter{root: schema}
	return c.convert(schema, 0, nil)
}

type geminiConverter struct {
	root  map[string]any
	nodes int // schemas converted so far, bounded by maxSchemaNodes
}

// maxSchemaNodes bounds the size of a converted schema, so that references
// that fan out (A uses B twice, B uses C twice, ...) cannot explode.
const maxSchemaNodes = 10000

func (c *geminiConverter) convert(s map[string]any, depth int, refs []string) map[string]any {
	if s == nil {
		return map[string]any{}
	}
	c.nodes++
	if depth > maxSchemaDepth || c.nodes > maxSchemaNodes {
		return map[string]any{"type": "OBJECT", "description": "(nested too deeply or too large; definition omitted)"}
	}
	if ref, ok := s["$ref"].(string); ok {
		if slices.Contains(refs, ref) {
			return map[string]any{"type": "OBJECT", "description": "(recursive definition of " + ref + " omitted)"}
		}
		target, ok := c.resolve(ref)
		if !ok {
			return map[string]any{"type": "OBJECT", "description": "(unresolved reference " + ref + ")"}
		}
		merged := maps.Clone(target)
		for k, v := range s { // siblings of $ref (a description, say) win
			if k != "$ref" {
				merged[k] = v
			}
		}
		return c.convert(merged, depth+1, append(slices.Clip(refs), ref))
	}

	out := map[string]any{}
	var notes []string
	for _, k := range geminiKeys {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	if _, ok := out["example"]; !ok {
		if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
			out["example"] = ex[0]
		}
	}

	// type, possibly a list.
	switch t := s["type"].(type) {
	case string:
		switch {
		case t == "null":
			out["nullable"] = true
		case geminiKnownType(t):
			out["type"] = t
		case t != "":
			notes = append(notes, "Type: "+t+".") // and inferred below
		}
	case []any:
		var types []string
		for _, v := range t {
			if name, ok := v.(string); ok {
				switch {
				case name == "null":
					out["nullable"] = true
				case geminiKnownType(name):
					types = append(types, name)
				case name != "":
					notes = append(notes, "Type: "+name+".")
				}
			}
		}
		switch len(types) {
		case 0:
		case 1:
			out["type"] = types[0]
		default:
			branches := make([]any, len(types))
			for i, name := range types {
				b := map[string]any{"type": name}
				for _, k := range geminiTypeKeys[name] {
					if v, ok := s[k]; ok {
						b[k] = v
					}
				}
				branches[i] = c.convert(b, depth+1, refs)
			}
			out["anyOf"] = branches
			for _, keys := range geminiTypeKeys { // each branch has its own
				for _, k := range keys {
					delete(out, k)
				}
			}
			return withNotes(out, notes)
		}
	}
	if _, typed := out["type"]; !typed {
		// Gemini reads properties and items only under their type.
		switch {
		case s["properties"] != nil:
			out["type"] = "object"
		case s["items"] != nil, s["prefixItems"] != nil:
			out["type"] = "array"
		}
	}

	// const and enum.
	if v, ok := s["const"]; ok {
		if _, has := s["enum"]; !has {
			s = maps.Clone(s)
			s["enum"] = []any{v}
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		var strs []any
		allStrings := true
		for _, v := range enum {
			switch x := v.(type) {
			case nil:
				out["nullable"] = true
			case string:
				strs = append(strs, x)
			default:
				allStrings = false
			}
		}
		if allStrings && len(strs) > 0 {
			out["enum"] = strs
			out["type"] = "string"
		} else {
			vals := make([]string, 0, len(enum))
			for _, v := range enum {
				data, _ := json.Marshal(v)
				vals = append(vals, string(data))
			}
			notes = append(notes, "One of: "+strings.Join(vals, ", ")+".")
		}
	}

	// format.
	if f, ok := s["format"].(string); ok {
		typ, _ := out["type"].(string)
		if slices.Contains(geminiFormats[strings.ToLower(typ)], f) { // any spelling: "INTEGER" too
			out["format"] = f
		} else {
			notes = append(notes, "Format: "+f+".")
		}
	}

	// object.
	if props, ok := s["properties"].(map[string]any); ok && len(props) > 0 {
		cp := make(map[string]any, len(props))
		for name, p := range props {
			if pm, ok := p.(map[string]any); ok {
				cp[name] = c.convert(pm, depth+1, refs)
			} else {
				cp[name] = map[string]any{} // true / false schemas: anything
			}
		}
		out["properties"] = cp
		if req := requiredIn(s["required"], cp); len(req) > 0 {
			out["required"] = req
		}
	}

	// array.
	switch items := s["items"].(type) {
	case map[string]any:
		out["items"] = c.convert(items, depth+1, refs)
	case []any: // tuple form
		out["items"] = c.union(items, depth, refs)
	}
	if _, ok := out["items"]; !ok {
		if prefix, ok := s["prefixItems"].([]any); ok {
			out["items"] = c.union(prefix, depth, refs)
		}
	}
	if typ, _ := out["type"].(string); strings.EqualFold(typ, "array") && out["items"] == nil { // "ARRAY" too
		// Gemini requires items; JSON Schema's default is any value.
		out["items"] = map[string]any{"type": "STRING"}
		notes = append(notes, "Items: any value, given as text.")
	}

	// anyOf / oneOf.
	var branches []any
	for _, key := range []string{"anyOf", "oneOf"} {
		if list, ok := s[key].([]any); ok {
			branches = append(branches, list...)
		}
	}
	if len(branches) > 0 {
		var kept []any
		for _, b := range branches {
			bm, ok := b.(map[string]any)
			if !ok {
				continue
			}
			if t, _ := bm["type"].(string); t == "null" && len(bm) == 1 {
				out["nullable"] = true
				continue
			}
			kept = append(kept, c.convert(bm, depth+1, refs))
		}
		switch len(kept) {
		case 0:
		case 1:
			for k, v := range kept[0].(map[string]any) {
				if _, set := out[k]; !set {
					out[k] = v
				}
			}
		default:
			out["anyOf"] = kept
		}
	}

	// allOf: merge.
	if list, ok := s["allOf"].([]any); ok {
		for _, b := range list {
			if bm, ok := b.(map[string]any); ok {
				mergeSchema(out, c.convert(bm, depth+1, refs))
			}
		}
	}
	geminiOwnKeywords(out)
	return withNotes(geminiTyped(out), notes)
}

// geminiKnownType reports whether t is a JSON Schema type Gemini has a
// name for, in any case.
func geminiKnownType(t string) bool {
	_, ok := geminiTypeNames[strings.ToLower(t)]
	return ok
}

// geminiOwnKeywords drops from a typed schema the keywords of the other
// types, which Gemini refuses (items on a STRING, properties on an ARRAY):
// they come from a schema that said two things at once, or from merged
// branches.
func geminiOwnKeywords(out map[string]any) {
	t, _ := out["type"].(string)
	t = strings.ToLower(t)
	if t == "" {
		return
	}
	own := geminiTypeKeys[t]
	for other, keys := range geminiTypeKeys {
		if other == t {
			continue
		}
		for _, k := range keys {
			if !slices.Contains(own, k) {
				delete(out, k)
			}
		}
	}
}

// geminiTypeKeys are, for each JSON Schema type, the keywords that apply to
// it: a branch of a type list gets only its own.
var geminiTypeKeys = map[string][]string{
	"string":  {"enum", "const", "format", "minLength", "maxLength", "pattern"},
	"number":  {"format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
	"integer": {"format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
	"array":   {"items", "prefixItems", "minItems", "maxItems"},
	"object":  {"properties", "required", "minProperties", "maxProperties", "propertyOrdering"},
}

// geminiTypeNames are the spellings of Gemini's Type enum, as the official
// SDK writes them (the REST API accepts them).
var geminiTypeNames = map[string]string{
	"string": "STRING", "number": "NUMBER", "integer": "INTEGER", "boolean": "BOOLEAN",
	"array": "ARRAY", "object": "OBJECT",
}

// geminiTyped writes out's type in Gemini's spelling; a type Gemini has no
// name for is dropped and named in the description.
func geminiTyped(out map[string]any) map[string]any {
	t, ok := out["type"].(string)
	if !ok {
		return out
	}
	// any case: "Object" as "object", and a name already converted (merged
	// from a branch) as itself
	if name, known := geminiTypeNames[strings.ToLower(t)]; known {
		out["type"] = name
		return out
	}
	delete(out, "type")
	return withNotes(out, []string{"Type: " + t + "."})
}

// union converts a list of schemas to one: the single schema, or an anyOf.
func (c *geminiConverter) union(list []any, depth int, refs []string) map[string]any {
	var kept []any
	for _, v := range list {
		if m, ok := v.(map[string]any); ok {
			kept = append(kept, c.convert(m, depth+1, refs))
		}
	}
	switch len(kept) {
	case 0:
		return map[string]any{}
	case 1:
		return kept[0].(map[string]any)
	}
	return map[string]any{"anyOf": kept}
}

// resolve follows a local JSON pointer reference ("#/$defs/X").
func (c *geminiConverter) resolve(ref string) (map[string]any, bool) {
	return jsonptr.Resolve(c.root, ref)
}

// compactJSON encodes v for a note in a description.
func compactJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// requiredIn keeps the names of req that are in props, in order.
func requiredIn(req any, props map[string]any) []any {
	var out []any
	switch r := req.(type) {
	case []any:
		for _, v := range r {
			if name, ok := v.(string); ok {
				if _, ok := props[name]; ok {
					out = append(out, name)
				}
			}
		}
	case []string:
		for _, name := range r {
			if _, ok := props[name]; ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// mergeSchema merges src into dst: properties and required are unions,
// other keywords already in dst win.
func mergeSchema(dst, src map[string]any) {
	for k, v := range src {
		switch k {
		case "properties":
			dp, _ := dst["properties"].(map[string]any)
			if dp == nil {
				dp = map[string]any{}
			}
			for name, p := range v.(map[string]any) {
				if _, ok := dp[name]; !ok {
					dp[name] = p
				}
			}
			dst["properties"] = dp
		case "required":
			dr, _ := dst["required"].([]any)
			for _, name := range v.([]any) {
				if !slices.Contains(dr, name) {
					dr = append(dr, name)
				}
			}
			dst["required"] = dr
		default:
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
	}
}

// withNotes appends notes to the schema's description.
func withNotes(out map[string]any, notes []string) map[string]any {
	if len(notes) == 0 {
		return out
	}
	desc, _ := out["description"].(string)
	parts := append([]string{}, notes...)
	if desc != "" {
		parts = append([]string{desc}, notes...)
	}
	out["description"] = strings.Join(parts, " ")
	return out
}
