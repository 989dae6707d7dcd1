package trace

import (
	"encoding/json"
	"strconv"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/redact"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// Redacted replaces the value of every sensitive argument field, and every
// occurrence of such a value (or of a URL's password) in stored text.
const Redacted = "[REDACTED]"

// DefaultMaxResultBytes is the default cap on a stored result's content or
// error message.
const DefaultMaxResultBytes = 64 << 10

// DefaultMaxArgumentBytes is the default cap on a call's stored arguments,
// as JSON.
const DefaultMaxArgumentBytes = 64 << 10

// arguments returns the stored form of a call's arguments: a JSON copy with
// the sensitive fields of def and of [WithRedactFields] redacted, every URL
// password scrubbed, capped; and the secret values removed, to scrub from
// the result (for a malformed call, those found in its raw text).
func (rec *Recorder) arguments(call llmtoolkit.Call, def llmtoolkit.Tool) (JSON, []string) {
	args, err := normalize(call.Arguments)
	if err != nil {
		return JSON{"_error": "the arguments could not be encoded as JSON: " + err.Error()}, nil
	}
	fields := redact.NewFields(def.SensitiveFields, rec.cfg.fields)
	secrets := fields.Apply(map[string]any(args), Redacted)
	if call.Malformed != nil {
		// No decoded arguments: the values are found in the raw text the
		// error quotes.
		secrets = append(secrets, fields.Raw(call.Malformed.Raw)...)
	}
	redact.ScrubJSON(map[string]any(args), secrets, Redacted)
	return rec.capArguments(args), secrets
}

// scrub removes secret values and URL passwords from stored text.
func scrub(s string, secrets []string) string { return redact.Scrub(s, secrets, Redacted) }

// capArguments bounds the stored arguments to WithMaxArgumentBytes of JSON.
// When they are larger, long strings are cut (each ends with a note of the
// bytes cut) and "_truncated": true and "_bytes" (the full size) are added;
// if that is still too large, only those two keys and "_preview", the start
// of the JSON text, are kept.
func (rec *Recorder) capArguments(args JSON) JSON {
	limit := rec.cfg.maxArgumentBytes
	if approxSize(map[string]any(args)) <= limit/2 {
		return args // cheap check first: the usual call is small
	}
	data, err := json.Marshal(args)
	if err != nil || len(data) <= limit {
		return args
	}
	full := len(data)
	per := max(limit/8, 256)
	cutStrings(map[string]any(args), per)
	args["_truncated"] = true
	args["_bytes"] = float64(full)
	if data, err = json.Marshal(args); err == nil && len(data) <= limit {
		return args
	}
	preview, _ := cut(string(data), limit-128)
	return JSON{"_truncated": true, "_bytes": float64(full), "_preview": preview}
}

// approxSize is a quick upper estimate of v's JSON size, without encoding.
func approxSize(v any) int {
	switch x := v.(type) {
	case string:
		return 2*len(x) + 2 // worst case of escapes, roughly
	case map[string]any:
		n := 2
		for k, e := range x {
			n += 2*len(k) + 4 + approxSize(e)
		}
		return n
	case []any:
		n := 2
		for _, e := range x {
			n += 1 + approxSize(e)
		}
		return n
	}
	return 32
}

// cutStrings cuts, in place, every string of v longer than per bytes.
func cutStrings(v any, per int) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				x[k] = cutString(s, per)
				continue
			}
			cutStrings(e, per)
		}
	case []any:
		for i, e := range x {
			if s, ok := e.(string); ok {
				x[i] = cutString(s, per)
				continue
			}
			cutStrings(e, per)
		}
	}
}

// cutString keeps the first per bytes of s and notes how many were cut.
func cutString(s string, per int) string {
	kept, cutOff := cut(s, per)
	if !cutOff {
		return s
	}
	return kept + "…[" + strconv.Itoa(len(s)-len(kept)) + " bytes cut]"
}

// cut returns s cut to at most max bytes on a UTF-8 boundary
// ([textutil.CutUTF8]), and whether it was cut.
func cut(s string, max int) (string, bool) {
	kept := textutil.CutUTF8(s, max)
	return kept, len(kept) < len(s)
}
