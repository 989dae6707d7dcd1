package toolsearch

import (
	"regexp"
	"regexp/syntax"
	"testing"

	"github.com/stretchr/testify/assert"
)

// FuzzPrefilterKeepsEveryMatch: the literal prefilter never rules out a
// text that the case-insensitive pattern matches, whatever the pattern
// and the text (Unicode case orbits such as k, K and the Kelvin sign
// included).
func FuzzPrefilterKeepsEveryMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"slack.*(post|message)", "Post a message to SLACK"},
		{"k", "\u212a"},
		{"ſ", "S"},
		{"(ab|cd)+e", "xxCDABE"},
		{"a{2,}b", "AAB"},
		{"(?-i:Abc)|x", "abc Abc"},
		{"ǅ", "ǆ"},
		{"[a-c]foo", "Bfoo"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		re, err := regexp.Compile("(?i)" + pattern)
		if err != nil {
			return
		}
		parsed, err := syntax.Parse("(?i)"+pattern, syntax.Perl)
		if err != nil {
			return
		}
		set := literals(parsed.Simplify())
		if set != nil && re.MatchString(text) {
			assert.True(t, containsAny(fold(text), set), "pattern %q matches %q but the prefilter %q rules it out", pattern, text, set)
		}
	})
}

// TestLiterals: the sets the prefilter uses for typical patterns.
func TestLiterals(t *testing.T) {
	for pattern, want := range map[string][]string{
		"slack.*(post|message)": {"SLACK"},
		"(create|open).*issue":  {"ISSUE"},
		"postgres|sql":          {"POSTGRES", "SQL"},
		".*":                    nil,
		"a?":                    nil,
	} {
		parsed, err := syntax.Parse("(?i)"+pattern, syntax.Perl)
		assert.NoError(t, err)
		assert.Equal(t, want, literals(parsed.Simplify()), pattern)
	}
}
