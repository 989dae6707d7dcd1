package schema

import (
	"reflect"
	"slices"

	"github.com/llmtoolkit/llmtoolkit/internal/jsonptr"
)

// maxNullDepth bounds the walk of DropOptionalNulls through nested and
// referenced schemas.
const maxNullDepth = 32

// DropOptionalNulls returns args without the null values of the
// properties the schema declares optional and whose own schema does not
// accept null, at any depth reached through "properties", "items" and
// local "$ref"s: for such a property, null and absent mean the same (a
// model in a provider's strict mode, where every property is required and
// an optional one nullable, sends null for an argument it leaves out). A
// null for a required property, or for one whose schema accepts null, is
// kept, and so validated as it is. args is never modified: a new map is
// returned when something was dropped, args itself otherwise.
func DropOptionalNulls(schema, args map[string]any) map[string]any {
	if len(args) == 0 || len(schema) == 0 || !hasNull(args, 0) {
		return args
	}
	w := nullWalk{root: schema}
	out, changed := w.drop(schema, args, 0)
	if !changed {
		return args
	}
	m, _ := out.(map[string]any)
	return m
}

// nullWalk is one walk of DropOptionalNulls: the schema's root (for
// "$ref"s), and what acceptsNull decided for each schema object met, so
// that the walk costs the size of the schema once, not once per path: a
// schema (a remote server's) whose anyOf branches refer to the same
// definitions has 2^depth paths, and arguments may hold many nulls.
type nullWalk struct {
	root    map[string]any
	accepts map[uintptr]bool
}

// drop is DropOptionalNulls on one value v of schema s, reporting
// whether it returned a changed copy of v.
func (w *nullWalk) drop(s map[string]any, v any, depth int) (any, bool) {
	if s == nil || depth > maxNullDepth {
		return v, false
	}
	if ref, ok := s["$ref"].(string); ok {
		if target, ok := jsonptr.Resolve(w.root, ref); ok {
			return w.drop(target, v, depth+1)
		}
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			return x, false
		}
		var out map[string]any // a copy, made at the first change
		for k, val := range x {
			ps, _ := props[k].(map[string]any)
			if ps == nil {
				continue
			}
			if val == nil {
				if !isRequired(s, k) && !w.acceptsNull(ps, 0) {
					if out == nil {
						out = cloneMap(x)
					}
					delete(out, k)
				}
				continue
			}
			if nv, changed := w.drop(ps, val, depth+1); changed {
				if out == nil {
					out = cloneMap(x)
				}
				out[k] = nv
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case []any:
		items, _ := s["items"].(map[string]any)
		if items == nil {
			return x, false
		}
		var out []any
		for i, e := range x {
			if ne, changed := w.drop(items, e, depth+1); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	}
	return v, false
}

// hasNull reports whether v holds a null object member within the depth
// DropOptionalNulls walks: most calls have none, and pay only this.
func hasNull(v any, depth int) bool {
	if depth > maxNullDepth {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if e == nil || hasNull(e, depth+1) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNull(e, depth+1) {
				return true
			}
		}
	}
	return false
}

// cloneMap copies m's entries to a new map.
func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// isRequired reports whether the object schema s lists name in "required".
func isRequired(s map[string]any, name string) bool {
	switch r := s["required"].(type) {
	case []any:
		return slices.Contains(r, any(name))
	case []string:
		return slices.Contains(r, name)
	}
	return false
}

// acceptsNull reports whether schema s may accept null: its type names
// "null", it is nullable (OpenAPI), its enum or const holds null, one of
// its anyOf/oneOf branches accepts null, or it constrains no type at all.
// It errs towards true (a schema nested deeper than maxNullDepth, or met
// again inside itself, accepts null): a null kept is judged by the
// validator.
func (w *nullWalk) acceptsNull(s map[string]any, depth int) bool {
	if depth > maxNullDepth || s == nil {
		return true
	}
	key := reflect.ValueOf(s).Pointer()
	if v, ok := w.accepts[key]; ok {
		return v
	}
	if w.accepts == nil {
		w.accepts = map[uintptr]bool{}
	}
	w.accepts[key] = true // while deciding: a cycle accepts
	v := w.decideNull(s, depth)
	w.accepts[key] = v
	return v
}

// decideNull is acceptsNull on a schema object not yet decided.
func (w *nullWalk) decideNull(s map[string]any, depth int) bool {
	if ref, ok := s["$ref"].(string); ok {
		target, ok := jsonptr.Resolve(w.root, ref)
		return !ok || w.acceptsNull(target, depth+1)
	}
	if s["nullable"] == true {
		return true
	}
	if c, ok := s["const"]; ok {
		return c == nil
	}
	if enum, ok := s["enum"].([]any); ok {
		return slices.Contains(enum, nil)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			for _, b := range list {
				if bm, ok := b.(map[string]any); ok && w.acceptsNull(bm, depth+1) {
					return true
				}
			}
			return false
		}
	}
	switch t := s["type"].(type) {
	case string:
		return t == "null"
	case []any:
		return slices.Contains(t, any("null"))
	case []string:
		return slices.Contains(t, "null")
	case nil:
		return true // no type: null may be valid
	}
	return true
}
