package textedit

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplyEdit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                     string
		content, oldText, newTxt string
		want                     string
		tolerant                 bool
		err                      error
		n                        int // occurrences, for ambiguous errors
	}{
		// The cases of pi's own tests.
		{name: "simple", content: "Hello, world!", oldText: "world", newTxt: "testing", want: "Hello, testing!"},
		{name: "not found", content: "Hello, world!", oldText: "nonexistent", newTxt: "x", err: ErrNoMatch},
		{name: "three occurrences", content: "foo foo foo", oldText: "foo", newTxt: "bar", n: 3},
		{name: "trailing whitespace", content: "line one   \nline two  \nline three\n", oldText: "line one\nline two\n", newTxt: "replaced\n", want: "replaced\nline three\n", tolerant: true},
		{name: "CRLF kept", content: "first\r\nsecond\r\nthird\r\n", oldText: "second", newTxt: "REPLACED", want: "first\r\nREPLACED\r\nthird\r\n"},
		{name: "CRLF and BOM kept", content: "\ufefffirst\r\nsecond\r\nthird\r\n", oldText: "second", newTxt: "REPLACED", want: "\ufefffirst\r\nREPLACED\r\nthird\r\n"},
		{name: "curly quotes", content: "say “hello” now", oldText: `"hello"`, newTxt: `"bye"`, want: `say "bye" now`, tolerant: true},
		{name: "en dash", content: "a – b", oldText: "a - b", newTxt: "c", want: "c", tolerant: true},
		{name: "no-break space", content: "x\u00a0=\u00a01\n", oldText: "x = 1", newTxt: "x = 2", want: "x = 2\n", tolerant: true},
		// More.
		{name: "identical", content: "abc", oldText: "b", newTxt: "b", err: ErrNoChange},
		{name: "empty oldText", content: "abc", oldText: "", newTxt: "x", err: ErrEmptyOldText},
		{name: "multi-line CRLF oldText with LF", content: "a\r\nb\r\nc\r\n", oldText: "a\nb\n", newTxt: "x\ny\n", want: "x\r\ny\r\nc\r\n"},
		{name: "model sends CRLF to an LF file", content: "a\nb\nc\n", oldText: "a\r\nb", newTxt: "x\r\ny", want: "x\ny\nc\n"},
		{name: "overlapping occurrences are ambiguous", content: "aaa", oldText: "aa", newTxt: "b", n: 2},
		{name: "exact beats tolerant", content: "say “hi” and \"hi\"", oldText: `"hi"`, newTxt: "yo", want: "say “hi” and yo"},
		{name: "tolerant counts uniqueness", content: "“hi” and ”hi“", oldText: `"hi"`, newTxt: "yo", n: 2},
		{name: "only the region changes", content: "keep\u00a0this\nfix “me”  \nkeep “that”\n", oldText: `fix "me"`, newTxt: "fixed", want: "keep\u00a0this\nfixed  \nkeep “that”\n", tolerant: true},
		{name: "NFKC", content: "the ﬁle is here", oldText: "the file is", newTxt: "a doc is", want: "a doc is here", tolerant: true},
		{name: "NFKC segment not split", content: "the ﬁle", oldText: "ile", newTxt: "x", err: ErrNoMatch},
		{name: "em dash in oldText", content: "a - b", oldText: "a — b", newTxt: "z", want: "z", tolerant: true},
		{name: "oldText with trailing spaces", content: "foo\nbar\n", oldText: "foo   \nbar", newTxt: "baz", want: "baz\n", tolerant: true},
		{name: "whitespace-only oldText not tolerant", content: "a\n\nb", oldText: "   ", newTxt: "x", err: ErrNoMatch},
		{name: "combining accent", content: "cafe\u0301 au lait", oldText: "café", newTxt: "tea", want: "tea au lait", tolerant: true},
		{name: "exact match never splits a combining mark from its letter", content: "cafe\u0301 au lait", oldText: "cafe", newTxt: "X", err: ErrNoMatch},
		{name: "exact match never starts on a combining mark", content: "cafe\u0301 au lait", oldText: "\u0301 au", newTxt: "X", err: ErrNoMatch},
		{name: "exact match never splits a joined emoji", content: "hi \U0001F469\u200d\U0001F4BB!", oldText: "hi \U0001F469", newTxt: "X", err: ErrNoMatch},
		{name: "exact match with the mark", content: "cafe\u0301 au lait", oldText: "cafe\u0301", newTxt: "tea", want: "tea au lait"},
		{name: "unsplit match next to a mark", content: "a cafe\u0301", oldText: "a ", newTxt: "the ", want: "the cafe\u0301"},
		{name: "invalid UTF-8 kept", content: "a\xffb c", oldText: "c", newTxt: "d", want: "a\xffb d"},
		{name: "BOM not in region", content: "\ufeffhello", oldText: "hello", newTxt: "bye", want: "\ufeffbye"},
		{name: "mixed endings keep others", content: "a\r\nb\nc\r\n", oldText: "b\nc", newTxt: "B\nC", want: "a\r\nB\r\nC\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, m, err := Apply(tt.content, tt.oldText, tt.newTxt)
			switch {
			case tt.n > 0:
				var ae *AmbiguousError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, tt.n, ae.N)
			case tt.err != nil:
				assert.ErrorIs(t, err, tt.err)
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				assert.Equal(t, tt.tolerant, m.Tolerant)
			}
		})
	}
}

func TestTolerantForm(t *testing.T) {
	t.Parallel()
	got, origin := tolerantForm("a “b”  \n\u00a0c–d\t\n", true)
	assert.Equal(t, "a \"b\"\n c-d\n", got)
	require.Equal(t, len(got), origin.len())
	assert.Equal(t, 0, origin.at(0))
	// Every origin is the start of a segment, non-decreasing.
	for i := 1; i < origin.len(); i++ {
		assert.LessOrEqual(t, origin.at(i-1), origin.at(i))
	}
}

func TestTolerantFormOrigins(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"",
		"plain ascii\nwith lines\n",
		"a" + strings.Repeat(" ", 300) + "\nb", // a jump past originFar
		strings.Repeat("“q” ", 100) + "\n" + strings.Repeat("\u00a0", 400) + "x",
		strings.Repeat("x", 1000) + strings.Repeat("ﬁ", 100) + "  \t\n",
		"cafe\u0301\xff\xfe \n",
	} {
		wantForm, wantOrigin := denseTolerantForm(s)
		got, origin := tolerantForm(s, true)
		require.Equal(t, wantForm, got, "%q", s)
		require.Equal(t, len(wantOrigin), origin.len(), "%q", s)
		for i, o := range wantOrigin {
			require.Equal(t, int(o), origin.at(i), "%q byte %d", s, i)
		}
	}
}

// FuzzTolerantForm checks the compact origins against the dense ones of
// the first implementation, and isTolerantForm against tolerantForm.
func FuzzTolerantForm(f *testing.F) {
	f.Add("a “b”  \n\u00a0c–d\t\n")
	f.Add("a" + strings.Repeat(" ", 300) + "\nb")
	f.Add("plain\n")
	f.Fuzz(func(t *testing.T, s string) {
		wantForm, wantOrigin := denseTolerantForm(s)
		got, origin := tolerantForm(s, true)
		if got != wantForm || origin.len() != len(wantOrigin) {
			t.Fatalf("form %q (%d origins), want %q (%d)", got, origin.len(), wantForm, len(wantOrigin))
		}
		for i, o := range wantOrigin {
			if origin.at(i) != int(o) {
				t.Fatalf("origin of byte %d is %d, want %d", i, origin.at(i), o)
			}
		}
		if plain, _ := tolerantForm(s, false); plain != got {
			t.Fatalf("without origins %q, with %q", plain, got)
		}
		if isTolerantForm(s) && got != s {
			t.Fatalf("isTolerantForm(%q) but its form is %q", s, got)
		}
	})
}

// denseTolerantForm is the first implementation of tolerantForm, with an
// int32 origin per byte, kept to check the compact one.
func denseTolerantForm(s string) (string, []int32) {
	out := make([]byte, 0, len(s))
	origin := make([]int32, 0, len(s))
	wsStart := -1
	emit := func(b byte, from int) {
		switch {
		case b == '\n':
			if wsStart >= 0 {
				out, origin = out[:wsStart], origin[:wsStart]
			}
			wsStart = -1
		case b == ' ' || b == '\t' || b == '\r' || b == '\f' || b == '\v':
			if wsStart < 0 {
				wsStart = len(out)
			}
		default:
			wsStart = -1
		}
		out = append(out, b)
		origin = append(origin, int32(from))
	}
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(s); {
		n := segmentLen(s, i)
		if n == 1 && s[i] < utf8.RuneSelf {
			emit(s[i], i)
			i++
			continue
		}
		seg := s[i : i+n]
		if !utf8.ValidString(seg) {
			for j := 0; j < len(seg); {
				r, size := utf8.DecodeRuneInString(seg[j:])
				if r == utf8.RuneError && size == 1 {
					emit(seg[j], i)
				} else {
					k := utf8.EncodeRune(buf[:], foldRune(r))
					for _, b := range buf[:k] {
						emit(b, i)
					}
				}
				j += size
			}
			i += n
			continue
		}
		for _, r := range norm.NFKC.String(seg) {
			k := utf8.EncodeRune(buf[:], foldRune(r))
			for _, b := range buf[:k] {
				emit(b, i)
			}
		}
		i += n
	}
	if wsStart >= 0 {
		out, origin = out[:wsStart], origin[:wsStart]
	}
	return string(out), origin
}

func TestFindUnique(t *testing.T) {
	t.Parallel()
	p, n := findUnique("abcabc", "abc", nil)
	assert.Equal(t, 0, p)
	assert.Equal(t, 2, n)
	p, n = findUnique("xabcx", "abc", nil)
	assert.Equal(t, 1, p)
	assert.Equal(t, 1, n)
	_, n = findUnique("abab a", "aba", nil)
	assert.Equal(t, 1, n)
	_, n = findUnique("ababa", "aba", nil)
	assert.Equal(t, 2, n, "overlap is ambiguous")
	_, n = findUnique("abc", "abcd", nil)
	assert.Equal(t, 0, n)
}

// FuzzApplyEdit checks the engine's promise: either exactly one region
// changed, holding the new text, and every other byte is as it was, or an
// error.
func FuzzApplyEdit(f *testing.F) {
	seeds := [][3]string{
		{"Hello, world!", "world", "testing"},
		{"foo foo foo", "foo", "bar"},
		{"line one   \nline two  \nline three\n", "line one\nline two\n", "replaced\n"},
		{"first\r\nsecond\r\nthird\r\n", "second", "REPLACED"},
		{"\ufefffirst\r\nsecond\r\n", "second", "X"},
		{"say “hello”", `"hello"`, "x"},
		{"a – b", "a - b", "c"},
		{"x\u00a0y", "x y", "z"},
		{"the ﬁle", "file", "doc"},
		{"cafe\u0301", "café", "tea"},
		{"a\xff\r\n\xfe", "\xff\n", "q"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, content, oldText, newText string) {
		got, m, err := Apply(content, oldText, newText)
		if err != nil {
			var ae *AmbiguousError
			if !errors.Is(err, ErrNoMatch) && !errors.Is(err, ErrNoChange) && !errors.Is(err, ErrEmptyOldText) && !errors.As(err, &ae) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if m.start < 0 || m.end < m.start || m.end > len(content) {
			t.Fatalf("bad region %d-%d of %d", m.start, m.end, len(content))
		}
		if got == content {
			t.Fatalf("success without a change")
		}
		styled := newEditText(content).styled(newText)
		if got != content[:m.start]+styled+content[m.end:] {
			t.Fatalf("more than the region changed")
		}
		if !strings.HasPrefix(got, content[:m.start]) || !strings.HasSuffix(got, content[m.end:]) {
			t.Fatalf("prefix or suffix changed")
		}
		if strings.HasPrefix(content, utf8BOM) && m.start < len(utf8BOM) {
			t.Fatalf("the BOM is inside the region")
		}
		region := content[m.start:m.end]
		if utf8.ValidString(content) && !utf8.ValidString(region) {
			t.Fatalf("region %q splits a character", region)
		}
		if !m.Tolerant {
			if strings.ReplaceAll(region, "\r\n", "\n") != strings.ReplaceAll(oldText, "\r\n", "\n") {
				t.Fatalf("exact region %q is not oldText %q", region, oldText)
			}
			return
		}
		tr, _ := tolerantForm(strings.ReplaceAll(region, "\r\n", "\n"), false)
		to, _ := tolerantForm(strings.ReplaceAll(oldText, "\r\n", "\n"), false)
		if tr != to {
			t.Fatalf("tolerant region %q (%q) is not oldText %q (%q)", region, tr, oldText, to)
		}
	})
}
