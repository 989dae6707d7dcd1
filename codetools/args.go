package codetools

import "fmt"

// The arguments reach a tool already validated against its schema; these
// helpers read them with their defaults. Numbers arrive as float64 from
// JSON, or as Go integers from callers building Calls in code.

func stringArg(args map[string]any, name, def string) string {
	if s, ok := args[name].(string); ok {
		return s
	}
	return def
}

func boolArg(args map[string]any, name string, def bool) bool {
	if b, ok := args[name].(bool); ok {
		return b
	}
	return def
}

func intArg(args map[string]any, name string, def int) int {
	switch v := args[name].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case int64:
		return int(v)
	case fmt.Stringer: // json.Number
		var n int
		if _, err := fmt.Sscan(v.String(), &n); err == nil {
			return n
		}
	}
	return def
}
