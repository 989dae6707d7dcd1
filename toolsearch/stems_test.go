package toolsearch

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// sameMeaning are the words of the tuned-on catalogs (and their needs)
// whose Snowball stem is that of a one-word member of the tables though
// they are not one of its inflections, and that mean what the member
// means: a noun or an adjective of its verb ("deletion", "approval",
// "downloadable"), its agent ("translator", "reviewer"), a sibling of its
// ("referral" and "referrer"). A word the stemmer merges with a member of
// another meaning is given a stem of its own ([ownStems]) instead.
var sameMeaning = map[string]bool{
	"retrieval": true, "detailed": true, "deletion": true, "deletions": true, "removal": true,
	"editable": true, "settings": true, "termination": true, "execution": true,
	"deployment": true, "deployments": true, "completely": true, "completion": true,
	"postings": true, "activation": true, "active": true, "approval": true, "approvals": true,
	"reviewed": true, "reviews": true, "assignment": true, "assignments": true,
	"downloadable": true, "duplication": true, "translation": true, "translations": true,
	"translator": true, "translators": true, "translate": true, "translated": true,
	"localization": true, "authentication": true, "authenticators": true, "filterable": true,
	"suppression": true, "suppressions": true, "expir": true, "expiration": true, "expire": true,
	"expired": true, "expires": true, "expiring": true, "reservation": true, "reserve": true,
	"reserved": true, "booked": true, "bookings": true, "break": true, "breaking": true, "breaks": true,
	"available": true, "availability": true, "documentation": true,
	"prices": true, "shipped": true, "tracked": true, "tracks": true, "fulfillable": true,
	"fulfilled": true, "funding": true, "spent": true,
	"logging": true, "stateful": true, "depend": true, "contentful": true, "registration": true,
	"registrant": true, "earn": true, "referral": true, "referrer": true, "complete": true,
	"completed": true, "subscribed": true, "similar": true, "application": true,
	"applications": true, "applicant": true, "offerings": true, "passed": true, "passes": true,
	"failed": true, "fails": true, "timings": true,
}

// mergedAnyway are words of another meaning than the member whose stem
// they share, left so: a shop's "listings" is stemmed as to list, as the
// gerund ("listing the files") must be; "listing" is no member of the
// product group for that reason.
var mergedAnyway = map[string]bool{"listings": true}

// TestTableStems: no one-word member of DefaultEquivalents or
// DefaultRelated shares its stem with a member of another group, or
// with a word of the tuned-on catalogs, unless the two are forms of one
// word or listed in sameMeaning: "invalidate" stemmed as "invalid",
// "presentation" as "present", "producer" as "produce" would give a
// query's "invalid", "present" or "produced" the group of the other.
func TestTableStems(t *testing.T) {
	type member struct{ word, group string }
	byStem := map[string][]member{}
	for _, table := range [][][]string{DefaultEquivalents, DefaultRelated} {
		for _, g := range table {
			for _, m := range g {
				if strings.ContainsAny(m, " -") {
					continue
				}
				s := (*stemmer)(nil).stem(m)
				byStem[s] = append(byStem[s], member{m, g[0]})
			}
		}
	}
	for s, ms := range byStem {
		for _, a := range ms {
			for _, b := range ms {
				if a.group < b.group && !formOf(a.word, b.word) && !sameMeaning[a.word] && !sameMeaning[b.word] {
					t.Errorf("%q (group %q) and %q (group %q) share the stem %q", a.word, a.group, b.word, b.group, s)
				}
			}
		}
	}
	for _, p := range [][2]string{{"invalidate", "invalid"}, {"presentation", "present"}, {"producer", "produced"},
		{"activity", "activate"}, {"business", "busy"}, {"conversion", "conversation"}, {"container", "contains"}} {
		if (*stemmer)(nil).stem(p[0]) == (*stemmer)(nil).stem(p[1]) {
			t.Errorf("%q and %q share a stem", p[0], p[1])
		}
	}
	word := regexp.MustCompile(`[A-Za-z]+`)
	seen := map[string]bool{}
	for _, f := range []string{"catalog.json", "catalog2.json", "catalog3.json", "catalog4.json",
		"needs.jsonl", "needs2.jsonl", "needs3.jsonl", "needs4.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range word.FindAllString(string(data), -1) {
			w = strings.ToLower(w)
			if seen[w] || stopwords[w] {
				continue
			}
			seen[w] = true
			for _, m := range byStem[(*stemmer)(nil).stem(w)] {
				if !formOf(m.word, w) && !sameMeaning[w] && !mergedAnyway[w] {
					t.Errorf("%s: %q has the stem of %q (group %q)", f, w, m.word, m.group)
				}
			}
		}
	}
}

// formOf tells whether a and b are forms of one word: the same, one an
// inflection of the other ("list", "lists", "listed", "listing";
// "reply", "replies"; "stop", "stopped"), or irregular forms of one
// base ("sent", "send").
func formOf(a, b string) bool {
	if irregular[a] != "" {
		a = irregular[a]
	}
	if irregular[b] != "" {
		b = irregular[b]
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if a == b {
		return true
	}
	stems := []string{a}
	if s, ok := strings.CutSuffix(a, "e"); ok {
		stems = append(stems, s)
	}
	if s, ok := strings.CutSuffix(a, "y"); ok {
		stems = append(stems, s+"i")
	}
	if len(a) > 2 {
		stems = append(stems, a+a[len(a)-1:])
	}
	for _, s := range stems {
		for _, suffix := range []string{"s", "es", "ed", "d", "ing", "er", "ers"} {
			if b == s+suffix {
				return true
			}
		}
	}
	return slices.Contains([]string{a + "s", a + "es"}, b)
}
