package trace

import (
	"strings"
	"unicode/utf8"
)

// Redacted replaces the value of every sensitive argument field.
const Redacted = "[REDACTED]"

// DefaultMaxResultBytes is the default cap on a stored result's content or
// error message.
const DefaultMaxResultBytes = 64 << 10

// SensitiveFieldsProvider is an optional capability of a resolver: the
// names of the argument fields of a tool whose values must never be stored
// (passwords, tokens, ...). A [Recorder] uses it when the wrapped resolver
// has it.
type SensitiveFieldsProvider interface {
	SensitiveFieldsFor(tool string) []string
}

// redact replaces, in place, the value of every key of v named in fields
// (compared without regard to case), at any depth in objects and arrays.
// v must be a fresh copy in JSON form (see normalize).
func redact(v any, fields map[string]struct{}) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if _, ok := fields[strings.ToLower(k)]; ok {
				x[k] = Redacted
				continue
			}
			redact(e, fields)
		}
	case JSON:
		redact(map[string]any(x), fields)
	case []any:
		for _, e := range x {
			redact(e, fields)
		}
	}
}

// fieldSet lowers names into a set; nil when there are none.
func fieldSet(lists ...[]string) map[string]struct{} {
	var set map[string]struct{}
	for _, l := range lists {
		for _, n := range l {
			if n == "" {
				continue
			}
			if set == nil {
				set = map[string]struct{}{}
			}
			set[strings.ToLower(n)] = struct{}{}
		}
	}
	return set
}

// cut returns s cut to at most max bytes on a UTF-8 boundary, and whether
// it was cut.
func cut(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}
