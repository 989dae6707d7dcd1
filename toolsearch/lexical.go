package toolsearch

import (
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// equivalents indexes groups of equivalent and of related words: a
// stemmed word, or two stemmed words joined with a space, to the group
// terms of the groups holding them.
type equivalents struct {
	groups map[string][]string // word or "word word" to the group terms
}

// Group terms are a mark and the group's first member: not a word a
// tokenizer makes. An equivalents group's mark is "~", a related group's
// "≈".
const (
	markEquivalent = "~"
	markRelated    = "≈"
)

// newEquivalents builds the table of groups: equivalent words, then
// related ones.
func newEquivalents(groups, related [][]string) *equivalents {
	e := &equivalents{groups: map[string][]string{}}
	e.add(markEquivalent, groups)
	e.add(markRelated, related)
	return e
}

func (e *equivalents) add(mark string, groups [][]string) {
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		key := mark + strings.Join(plainTerms(g[0]), " ")
		for _, member := range g {
			words := plainTerms(member)
			// A member of two words that is one without its stop words
			// ("send again", "on-call") is left out: the one word would
			// stand for the pair.
			parts := strings.FieldsFunc(member, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			if len(words) == 0 || len(words) > 2 || len(words) < len(parts) {
				continue
			}
			k := strings.Join(words, " ")
			if !slices.Contains(e.groups[k], key) {
				e.groups[k] = append(e.groups[k], key)
			}
		}
	}
}

// expand returns the group terms of a stream of terms: those of each two
// adjacent terms that are a member ("set up", "call off") and of each
// term that is not part of such a pair of an equivalents group, so that
// "set up" means create, not update.
func (e *equivalents) expand(ts []string) []string {
	var out []string
	for _, src := range e.sources(ts, nil) {
		out = append(out, src.groups...)
	}
	return out
}

// The parts of a pair of words that is a member of an equivalents group.
const (
	notPaired = iota
	pairFirst
	pairSecond
)

// maxParticleGap is how many words may stand between a phrasal verb and
// its particle, the verb's object: "turn the music down" is "turn down",
// "take bob off the list" "take off".
const maxParticleGap = 2

// particles are the particles of phrasal verbs that may follow the
// verb's object (stemmed: "in" and "on" are stop words).
var particles = map[string]bool{"up": true, "down": true, "off": true, "out": true, "back": true, "over": true, "away": true}

// source is the group terms of one word, or of a pair of words, of a
// stream: at, the position of the (first) word.
type source struct {
	at     int
	groups []string
}

// sources is expand's group terms, one list per word or pair of words
// that has any. When paired is not nil, it is set to the part each term
// plays in a pair of an equivalents group (notPaired, pairFirst,
// pairSecond, or pairSecond+k for the particle of a phrasal verb k words
// after the verb's next: "turn the music down").
func (e *equivalents) sources(ts []string, paired *[]int) []source {
	c := make([]int, len(ts))
	if paired != nil {
		*paired = c
	}
	if e == nil || len(e.groups) == 0 {
		return nil
	}
	var out []source
	for i := 0; i+1 < len(ts); i++ {
		g := e.groups[ts[i]+" "+ts[i+1]]
		if len(g) == 0 {
			continue
		}
		out = append(out, source{i, g})
		if slices.ContainsFunc(g, func(k string) bool { return strings.HasPrefix(k, markEquivalent) }) {
			c[i], c[i+1] = pairFirst, pairSecond
		}
	}
	// A phrasal verb's particle may follow its object ("turn the music
	// down", "take bob off the list").
	for i := 0; i+2 < len(ts); i++ {
		if c[i] != notPaired {
			continue
		}
		for j := i + 2; j < len(ts) && j <= i+1+maxParticleGap; j++ {
			if c[j] != notPaired {
				break
			}
			if !particles[ts[j]] {
				continue
			}
			g := e.groups[ts[i]+" "+ts[j]]
			if !slices.ContainsFunc(g, func(k string) bool { return strings.HasPrefix(k, markEquivalent) }) {
				continue
			}
			out = append(out, source{i, g})
			c[i], c[j] = pairFirst, pairSecond+(j-i-1)
			break
		}
	}
	for i, t := range ts {
		if g := e.groups[t]; c[i] == notPaired && len(g) > 0 {
			out = append(out, source{i, g})
		}
	}
	return out
}

// plainTerms is terms without the joined forms: the words of a phrase of
// the equivalents table.
func plainTerms(text string) []string {
	var out []string
	(*stemmer)(nil).tokenize(text, func(part string, joined bool) {
		if !joined {
			out = append(out, part)
		}
	})
	return out
}

// terms splits text into search terms, the same way for tools and
// queries: runs of letters, digits, underscores and hyphens, folded to
// lower case, split at underscores, hyphens, camelCase humps and between
// letters and digits ("getPRList2" gives "get", "pr", "list", "2"), the
// run kept whole as well, without its separators ("getprlist2"), so that
// "postgresql" meets "PostgreSQL" and "kubectl_scale" meets
// "kubectl_scale". Stop words are dropped and each term is stemmed
// ([stemmer]).
func terms(text string) []string { return (*stemmer)(nil).terms(text) }

// stemmer stems words with the Snowball English (Porter2) stemmer,
// remembering the stems it made: an index stems the same few thousand
// words again and again. A nil stemmer remembers nothing; a read-only
// one (an index's, for its queries) looks up what it remembers and adds
// nothing, so that queries can share it.
type stemmer struct {
	cache    map[string]string
	readOnly bool
}

// newStemmer returns a stemmer that remembers.
func newStemmer() *stemmer { return &stemmer{cache: map[string]string{}} }

// readOnlyView is a stemmer that looks up what s remembers and adds
// nothing: safe for concurrent use once s is no longer written.
func (s *stemmer) readOnlyView() *stemmer { return &stemmer{cache: s.cache, readOnly: true} }

// maxCachedStems bounds what a stemmer remembers.
const maxCachedStems = 1 << 16

// stem is w's Snowball English stem ("lists", "listed" give "list";
// "creates", "created" give "creat"), w itself when it has a digit
// ("ec2", "s3", "2"); an irregular form is stemmed as its base ("paid"
// as "pay"); a word of [ownStems] has its own ("activity", not
// activate's "activ").
func (s *stemmer) stem(w string) string {
	if s != nil {
		if st, ok := s.cache[w]; ok {
			return st
		}
	}
	st, base := w, w
	if b, ok := irregular[w]; ok {
		base = b
	}
	if own, ok := ownStems[w]; ok {
		st = own
	} else if strings.IndexFunc(base, unicode.IsDigit) < 0 {
		st = english.Stem(base, true)
	}
	if s != nil && !s.readOnly && len(s.cache) < maxCachedStems {
		s.cache[w] = st
	}
	return st
}

// known is the stem s remembers of w, if it does.
func (s *stemmer) known(w string) (string, bool) {
	if s == nil {
		return "", false
	}
	st, ok := s.cache[w]
	return st, ok
}

// terms is [terms] with s's stems.
func (s *stemmer) terms(text string) []string {
	var out []string
	s.tokenize(text, func(part string, _ bool) { out = append(out, part) })
	return out
}

// tokenize calls emit with each stemmed part of text (joined false) and,
// after the parts of a run of more than one, the run whole (joined true,
// false when none of its parts was emitted).
func (s *stemmer) tokenize(text string, emit func(term string, joined bool)) {
	s.tokenizeRuns(text, func(term string, joined bool, _ int) { emit(term, joined) })
}

// tokenizeRuns is tokenize, telling emit the run of word runes, counted
// from 0, each term is of.
func (s *stemmer) tokenizeRuns(text string, emit func(term string, joined bool, run int)) {
	rs := []rune(text)
	runs := -1
	for i := 0; i < len(rs); {
		if !isWordRune(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && isWordRune(rs[j]) {
			j++
		}
		run := rs[i:j]
		i = j
		runs++
		var parts []string
		var whole strings.Builder
		start := -1
		flush := func(end int) {
			if start >= 0 && end > start {
				parts = append(parts, strings.ToLower(string(run[start:end])))
			}
			start = -1
		}
		for k, r := range run {
			if r == '_' || r == '-' {
				flush(k)
				continue
			}
			whole.WriteRune(unicode.ToLower(r))
			if start >= 0 && k > 0 && boundary(run, k) {
				flush(k)
			}
			if start < 0 {
				start = k
			}
		}
		flush(len(run))
		emitted := 0
		for k, p := range parts {
			if !stopwords[p] && !isNumber(p) && !isUnit(parts, k) {
				emit(s.stem(p), false, runs)
				emitted++
			}
		}
		// The run whole is a joined form, or the word itself when none
		// of its parts is one ("k8s").
		if len(parts) > 1 {
			if w := whole.String(); !stopwords[w] {
				emit(s.stem(w), emitted > 0, runs)
			}
		}
	}
}

// isUnit tells a part of one or two letters next to a number in its run:
// a unit or a suffix of the number's ("40k", "3pm", "5mb", "14th", the v
// of "v2"), or of a name with a digit whose run is the word ("k8s",
// "ec2", "md5"); the run whole is kept.
func isUnit(parts []string, k int) bool {
	if len([]rune(parts[k])) > 2 {
		return false
	}
	return k > 0 && isNumber(parts[k-1]) || k+1 < len(parts) && isNumber(parts[k+1])
}

// isNumber tells a part of digits alone: a value ("issue 512", "at 3",
// the 2 of EC2), not a word of what a tool does; the run it is part of
// is kept ("ec2", "s3", "q3").
func isNumber(p string) bool {
	return strings.IndexFunc(p, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'
}

// boundary tells whether a new part starts at run[k]: a hump (aB), the
// last capital of a run of them before a lower-case letter (PRList's L),
// or a change between letters and digits.
func boundary(run []rune, k int) bool {
	prev, r := run[k-1], run[k]
	if prev == '_' || prev == '-' {
		return false
	}
	switch {
	case unicode.IsDigit(r) != unicode.IsDigit(prev):
		return true
	case unicode.IsUpper(r) && unicode.IsLower(prev):
		return true
	case unicode.IsUpper(r) && unicode.IsUpper(prev) && k+1 < len(run) && unicode.IsLower(run[k+1]):
		return true
	}
	return false
}
