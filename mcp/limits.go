package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// An MCP client reads one message per line, up to a limit: 16 MiB for the
// Go SDK (its DefaultMaxLineLength), after which the session dies and the
// call fails, however well it went. A tool result is kept well below: its
// text and its Display are each capped, as encoded in JSON, so that the
// whole answer stays under 12 MiB and a few bytes of envelope.
const (
	// maxTextBytes caps a tool result's text, encoded as a JSON string.
	maxTextBytes = 8 << 20
	// maxDisplayBytes caps a Display, encoded as JSON.
	maxDisplayBytes = 4 << 20
	// maxDisplayDepth caps a Display's nesting: the Go SDK refuses a
	// message nested more than 1000 levels deep.
	maxDisplayDepth = 500
	// maxKindBytes caps a Display's kind.
	maxKindBytes = 256
)

// truncatedMark ends a Display string cut to fit.
const truncatedMark = "... [truncated]"

// capResultText cuts a tool result's text to maxTextBytes once encoded,
// with a note for the model saying how much was left out.
func capResultText(s string) (string, bool) {
	if fitsJSON(s, maxTextBytes) {
		return s, false
	}
	total, most := textutil.HumanSize(int64(len(s))), textutil.HumanSize(maxTextBytes)
	note := func(kept int) string {
		return fmt.Sprintf("\n\n[Output truncated at %s of %s: one MCP answer carries at most %s. Ask for less, for example a narrower path, range or pattern]",
			textutil.HumanSize(int64(kept)), total, most)
	}
	// The note names the kept size, not known before cutting: leave room
	// for its widest form.
	budget := maxTextBytes - jsonStringLen(note(0)) - len("1023.9MB")
	kept := s[:jsonPrefix(s, budget)]
	return kept + note(len(kept)), true
}

// capText cuts s so that, encoded as a JSON string, it takes at most limit
// bytes, [truncatedMark] included; it reports whether it cut. Below the
// marker's own size, the marker alone is returned.
func capText(s string, limit int) (string, bool) {
	if fitsJSON(s, limit) {
		return s, false
	}
	budget := limit - jsonStringLen(truncatedMark)
	if budget <= 0 {
		return truncatedMark, true
	}
	return s[:jsonPrefix(s, budget)] + truncatedMark, true
}

// fitsJSON reports whether s takes at most limit bytes as a JSON string,
// without scanning s when even its widest encoding fits.
func fitsJSON(s string, limit int) bool {
	return 6*len(s)+2 <= limit || jsonStringLen(s) <= limit
}

// jsonStringLen is the size of s encoded as a JSON string by encoding/json
// (quotes included, HTML characters escaped, as the SDK encodes text).
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			n += asciiJSONLen[b]
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeJSONLen(r, size)
		i += size
	}
	return n
}

// jsonPrefix returns the length of the longest prefix of s that takes at
// most budget bytes encoded as a JSON string, quotes excluded, without
// splitting a UTF-8 sequence.
func jsonPrefix(s string, budget int) int {
	n := 0
	for i := 0; i < len(s); {
		var w, size int
		if b := s[i]; b < utf8.RuneSelf {
			w, size = int(asciiJSONLen[b]), 1
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			w = runeJSONLen(r, size)
		}
		if n+w > budget {
			return i
		}
		n += w
		i += size
	}
	return len(s)
}

// runeJSONLen is the encoded size of a non-ASCII rune read as size bytes:
// an invalid byte and the line separators U+2028 and U+2029 are escaped.
func runeJSONLen(r rune, size int) int {
	if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
		return len(`\u0000`)
	}
	return size
}

// asciiJSONLen is the encoded size of each ASCII byte in a JSON string.
var asciiJSONLen = func() (t [utf8.RuneSelf]int) {
	for b := range t {
		switch {
		case b == '"' || b == '\\' || b == '\n' || b == '\r' || b == '\t' || b == '\b' || b == '\f':
			t[b] = 2
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			t[b] = len(`\u0000`)
		default:
			t[b] = 1
		}
	}
	return t
}()

// displayJSON encodes d to send as structuredContent, within limit bytes
// and maxDisplayDepth levels. A Display that does not fit keeps its
// shape: its longest strings are cut, as little as possible, each ending
// with [truncatedMark]. One that still does not fit (too many values, or
// nested too deep) is replaced by a payload that says so:
// {"truncated": true, "reason": ..., "bytes": ...}. cut reports either.
// A Display that cannot be encoded, or whose encoding panics, is an error.
func displayJSON(d llmtoolkit.Display, limit int) (data json.RawMessage, cut bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			data, cut, err = nil, false, fmt.Errorf("encoding the display panicked: %v", p)
		}
	}()
	if !fitsJSON(d.Kind, maxKindBytes) {
		d.Kind, cut = capText(d.Kind, maxKindBytes)
	}
	data, err = json.Marshal(d)
	if err != nil {
		return nil, false, err
	}
	if jsonDepth(data) > maxDisplayDepth {
		return displayPlaceholder(d.Kind, len(data), limit,
			fmt.Sprintf("the display's payload is nested more than %d levels deep", maxDisplayDepth))
	}
	if len(data) <= limit {
		return data, cut, nil
	}
	var generic struct {
		Payload any `json:"payload"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&generic); err == nil {
		if payload, ok := cutStrings(generic.Payload, len(data), limit).(map[string]any); ok {
			smaller, err := json.Marshal(llmtoolkit.Display{Kind: d.Kind, Payload: payload})
			if err == nil && len(smaller) <= limit {
				return smaller, true, nil
			}
		}
	}
	return displayPlaceholder(d.Kind, len(data), limit,
		fmt.Sprintf("the display's payload was %s, more than the %s an MCP answer carries for it",
			textutil.HumanSize(int64(len(data))), textutil.HumanSize(int64(limit))))
}

// displayPlaceholder is the Display sent in place of one that does not
// fit: its kind, and a payload that says why.
func displayPlaceholder(kind string, size, limit int, reason string) (json.RawMessage, bool, error) {
	payloads := []map[string]any{
		{"truncated": true, "reason": reason, "bytes": size},
		{"truncated": true},
	}
	var data []byte
	var err error
	for _, p := range payloads {
		if data, err = json.Marshal(llmtoolkit.Display{Kind: kind, Payload: p}); err == nil && len(data) <= limit {
			break
		}
	}
	return data, true, err
}

// cutStrings returns v (a decoded JSON value of size bytes encoded) with
// its longest strings cut so that it takes at most limit bytes: every
// string longer than a threshold is cut to it, the threshold being the
// largest that fits. It returns nil when nothing fits.
func cutStrings(v any, size, limit int) any {
	var lens []int
	walkStrings(v, func(s string) string { lens = append(lens, jsonStringLen(s)); return s })
	fixed := size
	for _, l := range lens {
		fixed -= l
	}
	markLen := jsonStringLen(truncatedMark)
	total := func(threshold int) int {
		n := fixed
		for _, l := range lens {
			n += min(l, threshold+markLen)
		}
		return n
	}
	if total(0) > limit {
		return nil
	}
	lo, hi := 0, size // total(lo) fits; find the largest threshold that does
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if total(mid) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return walkStrings(v, func(s string) string {
		if jsonStringLen(s) <= lo+markLen {
			return s
		}
		return s[:jsonPrefix(s, lo)] + truncatedMark
	})
}

// walkStrings returns v with every string value (not object keys) replaced
// by fn's result; maps and slices are changed in place.
func walkStrings(v any, fn func(string) string) any {
	switch v := v.(type) {
	case string:
		return fn(v)
	case map[string]any:
		for k, e := range v {
			v[k] = walkStrings(e, fn)
		}
	case []any:
		for i, e := range v {
			v[i] = walkStrings(e, fn)
		}
	}
	return v
}

// jsonDepth is the deepest nesting of objects and arrays in valid JSON.
func jsonDepth(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
			deepest = max(deepest, depth)
		case b == '}' || b == ']':
			depth--
		}
	}
	return deepest
}
