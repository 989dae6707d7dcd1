package trace

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strings"

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
	b, err := json.Marshal(map[string]any(j))
	if err != nil {
		return nil, fmt.Errorf("trace: encoding a JSON column: %w", err)
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
