// Package redact removes secrets from the JSON form of tool arguments and
// from free text, by the rules of llmtoolkit.Tool.SensitiveFields: a plain
// name matches that key at any depth, a dotted name that exact path from the
// top (arrays passed through), both without regard to case. It is shared by
// every package that stores or exports calls (trace today), so that they
// redact exactly alike.
package redact

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// MinSecretLen is the shortest secret value searched for in free text
// (results, errors): a shorter one would erase too much unrelated text. It
// is still replaced in the arguments.
const MinSecretLen = 3

// Fields is a compiled set of sensitive field names. The zero value redacts
// nothing.
type Fields struct {
	names map[string]struct{} // plain names, lower case
	paths [][]string          // dotted names, lower case, split
}

// NewFields compiles the names of one or more lists; empty names are
// ignored.
func NewFields(lists ...[]string) Fields {
	var f Fields
	for _, l := range lists {
		for _, n := range l {
			n = strings.ToLower(strings.TrimSpace(n))
			switch {
			case n == "":
			case strings.Contains(n, "."):
				p := strings.Split(n, ".")
				if !slices.ContainsFunc(f.paths, func(q []string) bool { return slices.Equal(p, q) }) {
					f.paths = append(f.paths, p)
				}
			default:
				if f.names == nil {
					f.names = map[string]struct{}{}
				}
				f.names[n] = struct{}{}
			}
		}
	}
	return f
}

// Secrets returns the values of f's fields in a call's arguments, for
// [Scrub]: in args (read through a JSON copy: args is unchanged), or, when
// raw is not empty, in raw, the text of arguments that are not a JSON
// object ([Fields.Raw]).
func (f Fields) Secrets(args map[string]any, raw string) []string {
	if f.Empty() {
		return nil
	}
	if raw != "" {
		return f.Raw(raw)
	}
	var v any
	data, err := json.Marshal(args)
	if err != nil || json.Unmarshal(data, &v) != nil {
		return nil
	}
	return f.Apply(v, "")
}

// Empty reports whether f redacts nothing.
func (f Fields) Empty() bool { return len(f.names) == 0 && len(f.paths) == 0 }

// Apply replaces, in place, the value of every sensitive field of v (a
// fresh copy in JSON form: map[string]any, []any, strings, float64, ...)
// with replacement, and returns the texts of the values it removed (the
// strings and numbers they held, at any depth), for [Scrub].
func (f Fields) Apply(v any, replacement string) []string {
	if f.Empty() {
		return nil
	}
	var secrets []string
	f.apply(v, f.paths, replacement, &secrets)
	return secrets
}

// apply walks v; live are the dotted paths still matching at this level.
func (f Fields) apply(v any, live [][]string, replacement string, secrets *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			lk := strings.ToLower(k)
			_, named := f.names[lk]
			var next [][]string
			hit := named
			for _, p := range live {
				if p[0] != lk {
					continue
				}
				if len(p) == 1 {
					hit = true
				} else {
					next = append(next, p[1:])
				}
			}
			if hit {
				collect(e, secrets)
				x[k] = replacement
				continue
			}
			f.apply(e, next, replacement, secrets)
		}
	case []any:
		for _, e := range x {
			f.apply(e, live, replacement, secrets) // arrays are passed through
		}
	}
}

// collect appends the text of every string and number in v.
func collect(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case float64:
		*out = append(*out, strconv.FormatFloat(x, 'f', -1, 64))
	case int:
		*out = append(*out, strconv.Itoa(x))
	case int64:
		*out = append(*out, strconv.FormatInt(x, 10))
	case interface{ String() string }: // json.Number
		*out = append(*out, x.String())
	case map[string]any:
		for _, e := range x {
			collect(e, out)
		}
	case []any:
		for _, e := range x {
			collect(e, out)
		}
	}
}

// Scrub returns s with every occurrence of each secret (of at least
// MinSecretLen bytes) and every password of a URL's user information
// (scheme://user:password@host) replaced by replacement. Longer secrets
// are replaced first, so that one containing another goes whole.
func Scrub(s string, secrets []string, replacement string) string {
	if len(secrets) > 0 {
		sorted := slices.Clone(secrets)
		slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
		for _, sec := range sorted {
			if len(sec) >= MinSecretLen && sec != replacement {
				s = strings.ReplaceAll(s, sec, replacement)
			}
		}
	}
	return URLPasswords(s, replacement)
}

// URLPasswords replaces the password of every URL in s written as
// scheme://user:password@host with replacement ("https://ada:secret@host"
// becomes "https://ada:REPLACEMENT@host"). For the special schemes (http,
// https, ws, wss, ftp, in any case) it also takes the forms a WHATWG parser
// (a browser, many HTTP clients) reads as such a URL though Go's net/url
// does not: any number of slashes or backslashes after the colon, none
// included ("http:user:secret@host", `http:\\user:secret@host`). The user
// information ends at the last "@" before a "/", "\\", "?", "#", quote,
// angle bracket or space, so a password holding "@" goes whole.
func URLPasswords(s, replacement string) string {
	var b strings.Builder
	done := 0 // s[:done] is written to b, or unchanged when b is empty
	for i := 0; i < len(s); i++ {
		k := strings.IndexByte(s[i:], ':')
		if k < 0 {
			break
		}
		i += k
		a, ok := authorityStart(s, i)
		if !ok {
			continue
		}
		e := a + strings.IndexFunc(s[a:], func(r rune) bool {
			return strings.ContainsRune("/\\?#\"'`<>", r) || unicode.IsSpace(r)
		})
		if e < a {
			e = len(s)
		}
		authority := s[a:e]
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			if colon := strings.IndexByte(authority[:at], ':'); colon >= 0 {
				b.WriteString(s[done : a+colon+1])
				b.WriteString(replacement)
				done = a + at
			}
		}
		i = max(e-1, i)
	}
	if b.Len() == 0 && done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// URLPassword replaces with replacement what may be a password in s, a
// string that is one URL as written (an argument, a header) and may not
// parse: all from the first ":" after the scheme's "//" (or after the
// start when there is none) to the last "@". Where [URLPasswords] finds
// URLs in free text and must leave the rest alone, URLPassword errs
// towards hiding too much: a password may hold "/", "?" or "#" here, and
// the scheme may be missing ("user:secret@host").
func URLPassword(s, replacement string) string {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 && i == strings.IndexByte(s, ':') {
		start = i + len("://")
	}
	at := strings.LastIndexByte(s[start:], '@')
	if at < 0 {
		return s
	}
	colon := strings.IndexByte(s[start:start+at], ':')
	if colon < 0 {
		return s
	}
	return s[:start+colon+1] + replacement + s[start+at:]
}

// specialSchemes are the schemes whose URLs a WHATWG parser reads with an
// authority whatever the slashes after the colon.
var specialSchemes = []string{"http", "https", "ws", "wss", "ftp"}

// authorityStart says where the authority of a URL whose scheme ends at the
// colon s[colon] starts: after any run of slashes and backslashes for a
// special scheme written as a whole word, after "//" for any other scheme
// (which may be anything, even empty).
func authorityStart(s string, colon int) (int, bool) {
	start := colon
	for start > 0 && isSchemeByte(s[start-1]) {
		start--
	}
	scheme := s[start:colon]
	special := (start == 0 || !isWordByte(s[start-1])) &&
		slices.ContainsFunc(specialSchemes, func(sp string) bool { return strings.EqualFold(scheme, sp) })
	if !special {
		if strings.HasPrefix(s[colon+1:], "//") {
			return colon + 3, true
		}
		return 0, false
	}
	a := colon + 1
	for a < len(s) && (s[a] == '/' || s[a] == '\\') {
		a++
	}
	return a, true
}

// isSchemeByte reports whether c may be part of a URL scheme.
func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// isWordByte reports whether c would make a scheme before it part of a
// longer word.
func isWordByte(c byte) bool { return isSchemeByte(c) || c == '_' || c >= 0x80 }

// ScrubJSON applies [Scrub] to every string of v (a fresh copy in JSON
// form), in place, keys included.
func ScrubJSON(v any, secrets []string, replacement string) any {
	switch x := v.(type) {
	case string:
		return Scrub(x, secrets, replacement)
	case map[string]any:
		for k, e := range x {
			nk := Scrub(k, secrets, replacement)
			if nk != k {
				delete(x, k)
			}
			x[nk] = ScrubJSON(e, secrets, replacement)
		}
	case []any:
		for i, e := range x {
			x[i] = ScrubJSON(e, secrets, replacement)
		}
	}
	return v
}

// Raw returns the secret values f finds in raw, the text of arguments that
// could not be decoded (a model's malformed call, cut off or not JSON at
// all): every value of a `name: value` pair whose name is sensitive, found
// leniently. Names may be quoted with " or ' or bare, followed by ':' or
// '='; a quoted value runs to its closing quote or the end of the text (a
// value cut off is still a secret), a bare one to the next ',', '}', ']',
// newline or the end. A dotted name is matched by its last part, wherever
// it is. Each value is returned as written and, when it holds escapes,
// decoded and Go-quoted too, so that it is found in any text that quotes
// raw (an error message quoting it with %q, say).
func (f Fields) Raw(raw string) []string {
	if f.Empty() || raw == "" {
		return nil
	}
	names := make([]string, 0, len(f.names)+len(f.paths))
	for n := range f.names {
		names = append(names, n)
	}
	for _, p := range f.paths {
		names = append(names, p[len(p)-1])
	}
	lower := strings.ToLower(raw)
	var secrets []string
	for _, n := range names {
		for from := 0; ; {
			k := strings.Index(lower[from:], n)
			if k < 0 {
				break
			}
			start := from + k
			from = start + len(n)
			if start > 0 && isNameByte(lower[start-1]) || from < len(lower) && isNameByte(lower[from]) {
				continue // part of a longer name
			}
			if v, ok := rawValue(raw, from); ok {
				secrets = appendVariants(secrets, v)
			}
		}
	}
	return secrets
}

// isNameByte reports whether c may continue a bare key name.
func isNameByte(c byte) bool { return isWordByte(c) && c != '.' && c != '+' }

// rawValue reads the value after a key that ends at raw[i]: an optional
// closing quote, blanks, ':' or '=', blanks, then the value.
func rawValue(raw string, i int) (string, bool) {
	if i < len(raw) && (raw[i] == '"' || raw[i] == '\'') {
		i++
	}
	i = skipBlanks(raw, i)
	if i >= len(raw) || raw[i] != ':' && raw[i] != '=' {
		return "", false
	}
	i = skipBlanks(raw, i+1)
	if i >= len(raw) {
		return "", false
	}
	if q := raw[i]; q == '"' || q == '\'' {
		j := i + 1
		for j < len(raw) && raw[j] != q {
			if raw[j] == '\\' {
				j++
			}
			j++
		}
		return raw[i+1 : min(j, len(raw))], true
	}
	j := i
	for j < len(raw) && !strings.ContainsRune(",}]\n\r", rune(raw[j])) {
		j++
	}
	return strings.TrimSpace(raw[i:j]), j > i
}

// skipBlanks returns the index of the first byte at or after i that is not
// a blank.
func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// appendVariants appends v as written and, when they differ, its JSON
// decoding and the inside of its Go quoting (and of its decoding's).
func appendVariants(out []string, v string) []string {
	if v == "" {
		return out
	}
	out = append(out, v)
	forms := []string{v}
	if strings.ContainsRune(v, '\\') {
		var dec string
		if err := json.Unmarshal([]byte(`"`+v+`"`), &dec); err == nil && dec != v {
			out = append(out, dec)
			forms = append(forms, dec)
		}
	}
	for _, f := range forms {
		if q := strconv.Quote(f); q[1:len(q)-1] != f {
			out = append(out, q[1:len(q)-1])
		}
	}
	return out
}
