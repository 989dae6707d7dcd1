// Package jsonptr resolves the local JSON pointer references of a JSON
// Schema ("#", "#/$defs/X"), for the root package's null rule and
// provider's Gemini schema converter alike.
package jsonptr

import "strings"

// Resolve follows the local reference ref ("#" or "#/a/b", with ~1 and ~0
// escapes) from root, and reports whether it names an object.
func Resolve(root map[string]any, ref string) (map[string]any, bool) {
	if ref == "#" {
		return root, root != nil
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	var cur any = root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	m, ok := cur.(map[string]any)
	return m, ok
}
