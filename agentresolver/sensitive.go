package agentresolver

import (
	"fmt"
	"slices"
	"strings"
)

// checkSensitive reports a sensitive field name that no argument of the
// schema can ever match, so that a typo cannot leak a secret. The rules are
// those of [llmtoolkit.Tool.SensitiveFields]: a plain name matches that key
// at any depth, a dotted name that exact path (arrays passed through), both
// without regard to case. A schema that is open where the name could occur
// (no "properties", "additionalProperties" not false, "patternProperties",
// a "$ref") accepts any name there; an object that describes its
// properties and says nothing of others counts as closed for this check.
func checkSensitive(params map[string]any, name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("a sensitive field name is empty; give the argument's JSON name")
	}
	if !strings.Contains(name, ".") {
		if !nameAnywhere(params, name, 0) {
			return fmt.Errorf("sensitive field %q is not an argument of the tool at any depth; use the argument's JSON name", name)
		}
		return nil
	}
	path := strings.Split(name, ".")
	if slices.Contains(path, "") {
		return fmt.Errorf("sensitive field %q has an empty path segment; write it as parent.child", name)
	}
	if !pathPossible(params, path, 0) {
		return fmt.Errorf("sensitive field %q is not an argument path of the tool; use the JSON names from the top, like parent.child", name)
	}
	return nil
}

// maxSchemaDepth bounds the walk of a (possibly self-similar) schema.
const maxSchemaDepth = 64

// nameAnywhere reports whether a key called name can occur anywhere in a
// value of schema s.
func nameAnywhere(s map[string]any, name string, depth int) bool {
	if depth > maxSchemaDepth || isOpen(s) {
		return true
	}
	if _, ok := property(s, name); ok {
		return true
	}
	for _, sub := range children(s) {
		if nameAnywhere(sub, name, depth+1) {
			return true
		}
	}
	return false
}

// pathPossible reports whether a value of schema s can hold path, key by
// key from its top, arrays being passed through.
func pathPossible(s map[string]any, path []string, depth int) bool {
	if len(path) == 0 || depth > maxSchemaDepth {
		return true
	}
	for _, alt := range alternatives(s) {
		if pathPossible(alt, path, depth+1) {
			return true
		}
	}
	for _, item := range itemSchemas(s) {
		if pathPossible(item, path, depth+1) {
			return true
		}
	}
	if p, ok := property(s, path[0]); ok {
		if pathPossible(p, path[1:], depth+1) {
			return true
		}
	}
	return isOpen(s)
}

// isOpen reports whether an object schema accepts keys it does not name
// (see checkSensitive for what counts).
func isOpen(s map[string]any) bool {
	if _, ref := s["$ref"]; ref {
		return true
	}
	if pp, ok := s["patternProperties"].(map[string]any); ok && len(pp) > 0 {
		return true
	}
	if !isObjectSchema(s) {
		return false
	}
	props, _ := s["properties"].(map[string]any)
	switch ap := s["additionalProperties"].(type) {
	case bool:
		return ap
	case map[string]any:
		return true
	default: // not said: open only when no property is described
		return len(props) == 0
	}
}

// isObjectSchema reports whether s describes objects (or says nothing of
// its type but has object keywords).
func isObjectSchema(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	case []string:
		return slices.Contains(t, "object")
	case nil:
		_, hasProps := s["properties"]
		return hasProps
	}
	return false
}

// property finds a property of s by name, without regard to case.
func property(s map[string]any, name string) (map[string]any, bool) {
	props, _ := s["properties"].(map[string]any)
	for k, v := range props {
		if strings.EqualFold(k, name) {
			m, _ := v.(map[string]any)
			if m == nil {
				m = map[string]any{} // true: anything
			}
			return m, true
		}
	}
	return nil, false
}

// children lists every sub-schema of s.
func children(s map[string]any) []map[string]any {
	var out []map[string]any
	if props, ok := s["properties"].(map[string]any); ok {
		for _, v := range props {
			if m, ok := v.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	if m, ok := s["additionalProperties"].(map[string]any); ok {
		out = append(out, m)
	}
	out = append(out, itemSchemas(s)...)
	return append(out, alternatives(s)...)
}

// itemSchemas lists the schemas of an array's elements.
func itemSchemas(s map[string]any) []map[string]any {
	var out []map[string]any
	switch it := s["items"].(type) {
	case map[string]any:
		out = append(out, it)
	case []any:
		out = appendMaps(out, it)
	}
	if pi, ok := s["prefixItems"].([]any); ok {
		out = appendMaps(out, pi)
	}
	return out
}

// alternatives lists the schemas of anyOf, oneOf and allOf.
func alternatives(s map[string]any) []map[string]any {
	var out []map[string]any
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := s[k].([]any); ok {
			out = appendMaps(out, list)
		}
	}
	return out
}

func appendMaps(out []map[string]any, list []any) []map[string]any {
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
