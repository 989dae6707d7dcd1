package trace

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"
)

// JSON is a JSON object stored in a portable column: jsonb on PostgreSQL,
// text on SQLite. Both give back the same Go values: the ones
// encoding/json decodes into a map[string]any.
type JSON map[string]any

// Value encodes j as JSON text; nil is stored as {}, and NUL characters
// as U+FFFD (see [New]).
func (j JSON) Value() (driver.Value, error) {
	if j == nil {
		return "{}", nil
	}
	b, ok := appendJSONObject(make([]byte, 0, 128), j)
	if !ok { // a value appendJSON does not encode: encoding/json's answer
		var err error
		if b, err = json.Marshal(map[string]any(j)); err != nil {
			return nil, fmt.Errorf("trace: encoding a JSON column: %w", err)
		}
	}
	if strings.Contains(string(b), `\u0000`) { // built by hand, not by New
		n, err := normalize(j)
		if err != nil {
			return nil, fmt.Errorf("trace: encoding a JSON column: %w", err)
		}
		if b, err = json.Marshal(map[string]any(n)); err != nil {
			return nil, fmt.Errorf("trace: encoding a JSON column: %w", err)
		}
	}
	return string(b), nil
}

// appendJSONColumn appends the text [JSON.Value] gives for j, if
// appendJSONObject encodes it alone: ok is false for a value it does not
// encode and for text holding an escaped NUL (JSON.Value normalizes those).
func appendJSONColumn(b []byte, j JSON) ([]byte, bool) {
	if j == nil {
		return append(b, "{}"...), true
	}
	start := len(b)
	b, ok := appendJSONObject(b, j)
	if !ok || bytes.Contains(b[start:], []byte(`\u0000`)) {
		return b[:start], false
	}
	return b, true
}

// Scan decodes a JSON object read from either database.
func (j *JSON) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*j = nil
		return nil
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		return fmt.Errorf("trace: cannot read a JSON column from %T", src)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("trace: decoding a JSON column: %w", err)
	}
	*j = m
	return nil
}

// GormDataType returns "json".
func (JSON) GormDataType() string { return "json" }

// GormDBDataType returns the column type for the database: jsonb on
// PostgreSQL, text elsewhere.
func (JSON) GormDBDataType(db *gorm.DB, _ *schema.Field) string {
	if db.Dialector.Name() == "postgres" {
		return "jsonb"
	}
	return "text"
}

// normalize returns v in its JSON form, as a fresh copy: encoded and decoded
// again, with every NUL character in keys and strings replaced by U+FFFD
// (PostgreSQL's jsonb cannot hold NUL, and both databases must give back the
// same values). Nil gives an empty object.
func normalize(v map[string]any) (JSON, error) {
	if len(v) == 0 {
		return JSON{}, nil
	}
	if m, ok := jsonCopy(v); ok { // the usual arguments: no encoding needed
		return JSON(m.(map[string]any)), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return JSON{}, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return JSON{}, err
	}
	if strings.Contains(string(b), `\u0000`) {
		m = stripNUL(m).(map[string]any)
	}
	return JSON(m), nil
}

// stripNUL replaces NUL characters in the keys and strings of a decoded JSON
// value.
func stripNUL(v any) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "\x00", "\uFFFD")
	case []any:
		for i := range x {
			x[i] = stripNUL(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[strings.ReplaceAll(k, "\x00", "\uFFFD")] = stripNUL(e)
		}
		return out
	}
	return v
}

// jsonCopy copies v as encoding and decoding it would give it back, for
// the values a model's arguments are made of: objects, arrays, strings,
// booleans, nil, finite float64 and Go integers (which decode as the same
// float64). Strings become valid UTF-8 as encoding/json makes them (each
// invalid byte a U+FFFD) and NUL becomes U+FFFD. It reports false for
// anything else (other Go types, a key that is not valid UTF-8 or holds a
// NUL, NaN or ±Inf), which normalize then encodes and decodes.
func jsonCopy(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool:
		return x, true
	case string:
		return jsonString(x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !utf8.ValidString(k) || strings.IndexByte(k, 0) >= 0 {
				return nil, false
			}
			c, ok := jsonCopy(e)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := jsonCopy(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}

// jsonString is s as encoding and decoding it gives it back (each byte
// that is not UTF-8 a U+FFFD), with NUL as U+FFFD.
func jsonString(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0 || (r == utf8.RuneError && size == 1) {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
