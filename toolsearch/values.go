package toolsearch

import (
	"regexp"
	"slices"
	"strings"
)

// A query often holds values as well as words: an address to mail, a
// version to publish, a price, a time, a domain to buy ("make
// 3.0.0-beta.2 what people get with @next", "is coolbakery.io taken",
// "push my 3pm with Marco to friday"). A value's own words are no words
// of what a tool does ("acme", "io", "pm", the "b" and "da" of a trace
// id), but its kind is: tools name the arguments that take it (version,
// domain, email, price, start time). valueKinds recognizes values by
// their form, takes them out of the query's words and stands for each by
// the words of its kind, at weightValue.

// valueKind is one kind of value: the pattern of its values, the words
// that name it, and whether the value's own words stay in the query (a
// file name's extension, "report.pdf", says what the tool reads; a
// host name's labels but the last may be the server's name,
// "monday.com").
type valueKind struct {
	pattern *regexp.Regexp
	words   string
	keep    bool
	// host is set for host names: kept without their top-level domain.
	host bool
	// anyOf are the ASCII characters a value of the kind has one of at least:
	// a query without any is not matched against the pattern.
	anyOf string
}

// digits is the anyOf of the kinds whose values hold a digit.
const digits = "0123456789"

// weightValue is the weight of the words of a value's kind.
const weightValue = 0.8

// The kinds of values, most specific first: a value is matched by the
// first kind whose pattern takes it.
var valueKinds = []valueKind{
	{pattern: regexp.MustCompile(`(?i)\bhttps?://[^\s"'<>]+`), words: "url link", anyOf: ":"},
	{pattern: regexp.MustCompile(`(?i)\b[\w.+-]+@[\w-]+(\.[\w-]+)+\b`), words: "email address", anyOf: "@"},
	// A DOI ("10.1038/nature14539").
	{pattern: regexp.MustCompile(`\b10\.\d{4,9}/[^\s"'<>]+`), words: "doi identifier", anyOf: digits},
	// Coordinates: two decimal numbers of three places or more.
	{pattern: regexp.MustCompile(`-?\b\d{1,3}\.\d{3,}\s*,\s*-?\d{1,3}\.\d{3,}\b`), words: "coordinates latitude longitude", anyOf: digits},
	{pattern: regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}\b`), words: "ip address", anyOf: digits},
	// A version: three parts or more, or two after a v, with a pre-release.
	{pattern: regexp.MustCompile(`(?i)\bv?\d+(\.\d+){2,}([-+][\w.]+)?\b|\bv\d+\.\d+\b`), words: "version", anyOf: digits},
	// A file name, by its extension.
	{pattern: regexp.MustCompile(`(?i)\b[\w-]+\.(json|ya?ml|toml|csv|tsv|txt|md|pdf|docx?|xlsx?|pptx?|png|jpe?g|gif|svg|webp|mp3|mp4|mov|wav|zip|tar|gz|tgz|log|xml|html?|js|ts|py|go|rb|java|sql|sh|env|ini|conf)\b`), words: "file", keep: true, anyOf: "."},
	// A host name, by a common top-level domain.
	{pattern: regexp.MustCompile(`(?i)\b([a-z0-9-]+\.)+(com|org|net|io|ai|dev|app|co|us|uk|de|fr|eu|me|info|biz|xyz|tech|site|shop|cloud)\b`), words: "domain", keep: true, host: true, anyOf: "."},
	// Money: a currency sign or a currency's name after an amount.
	{pattern: regexp.MustCompile(`(?i)[$€£¥]\s?\d[\d,.]*k?\b|\b\d[\d,.]*k?\s?(dollars?|bucks|euros?|pounds?|usd|eur|gbp|yen|jpy|cad|aud|chf)\b`), words: "price amount currency", anyOf: digits},
	// A time of day.
	{pattern: regexp.MustCompile(`(?i)\b\d{1,2}(:\d\d)?\s?(am|pm)\b|\b\d{1,2}:\d\d\b`), words: "time", anyOf: digits},
	// An ordinal day ("the 14th").
	{pattern: regexp.MustCompile(`(?i)\b\d{1,2}(st|nd|rd|th)\b`), words: "date", anyOf: digits},
	// A size or a duration.
	{pattern: regexp.MustCompile(`(?i)\b\d+(\.\d+)?\s?(kb|mb|gb|tb|kib|mib|gib|bytes?)\b`), words: "size", anyOf: digits},
	{pattern: regexp.MustCompile(`(?i)\b\d+(\.\d+)?\s?(px|pixels?)\b`), words: "size width", anyOf: digits},
	{pattern: regexp.MustCompile(`(?i)\b\d+(\.\d+)?\s?(ms|milliseconds?|seconds?|secs?|minutes?|mins?)\b`), words: "duration", anyOf: digits},
	{pattern: regexp.MustCompile(`(?i)\b\d+(\.\d+)?\s?(%|percent)`), words: "percentage", anyOf: digits},
	{pattern: regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), words: "id", anyOf: digits},
	// An id: a run of lower-case hex digits and letters mixed, eight or
	// more with three digits or more ("4bf92f3577b34da6"; isID tells).
	{pattern: regexp.MustCompile(`\b[0-9a-f]*\d[0-9a-f]*[a-f][0-9a-f]*\b`), words: "id", anyOf: digits},
	// A channel ("#general"), a subreddit ("r/golang").
	{pattern: regexp.MustCompile(`(^|\s)#[\w-]+`), words: "channel", anyOf: "#"},
	{pattern: regexp.MustCompile(`(?i)(^|\s)/?r/\w+`), words: "subreddit", anyOf: "/"},
	// An environment variable's name: upper-case words joined with
	// underscores ("NPM_TOKEN").
	{pattern: regexp.MustCompile(`\b[A-Z][A-Z0-9]*(_[A-Z0-9]+)+\b`), words: "variable", keep: true, anyOf: "_"},
}

// values takes the values out of query: the query without them (those
// of a kind that keeps them left as they are) and the words of their
// kinds, each kind once. A host name that is a server's name
// ("monday.com", when isServer says monday is one) names the server: it
// is no domain (isServer nil: none is).
func values(query string, isServer func(string) bool) (string, []string) {
	// has is the ASCII characters of query, a bit each: a kind is tried
	// only on a query with a character of its anyOf.
	var has [2]uint64
	for i := 0; i < len(query); i++ {
		if c := query[i]; c < 128 {
			has[c/64] |= 1 << (c % 64)
		}
	}
	hasAny := func(set string) bool {
		for i := 0; i < len(set); i++ {
			if c := set[i]; c < 128 && has[c/64]&(1<<(c%64)) != 0 {
				return true
			}
		}
		return false
	}
	var kinds []string
	for _, k := range valueKinds {
		if !hasAny(k.anyOf) || !k.pattern.MatchString(query) {
			continue
		}
		matched := false
		query = k.pattern.ReplaceAllStringFunc(query, func(v string) string {
			if k.words == "id" && !strings.Contains(v, "-") && !isID(v) {
				return v
			}
			if k.host {
				name := v[:strings.LastIndexByte(v, '.')]
				matched = matched || isServer == nil || !isServer(name)
				return name
			}
			matched = true
			if k.keep {
				return v
			}
			return " "
		})
		if matched && !slices.Contains(kinds, k.words) {
			kinds = append(kinds, k.words)
		}
	}
	return query, kinds
}

// isID tells a hex run that is an id from a word or a number: eight
// characters or more, three digits or more.
func isID(v string) bool {
	digits := 0
	for _, r := range v {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	return len(v) >= 8 && digits >= 3
}
