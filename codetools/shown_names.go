package codetools

import (
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// How the tools show names, and read them back: one rule for every
// listing (grep, glob, list_directory, tree, file_info, and the paths of
// the Display payloads), documented in the package doc.
//
// A name or path that is plain text is shown as it is. One that holds a
// line break or another control character, a character that does not
// print (U+202E, which reverses the text after it, U+2028), invalid
// UTF-8, or whose name or a part of it starts with a double quote, is shown as a Go
// double-quoted string, as strconv.Quote writes it: "x.txt\nsecret" stays
// on one line and cannot forge another line of the answer. Every path
// argument reads such a quoted name back (readName): the whole path, or
// any of its slash-separated parts, may be quoted, so a name shown opens
// the file it names.

// shownName returns name (a file name, or a path with forward slashes) as
// the tools show it.
func shownName(name string) string {
	if !needsQuotes(name) {
		return name
	}
	return strconv.Quote(name)
}

// shownPath is shownName of a root-relative path, with forward slashes.
func shownPath(rel string) string { return shownName(slashPath(rel)) }

// slashPath shows a root-relative path the way the tools print paths.
func slashPath(rel string) string { return filepath.ToSlash(rel) }

// needsQuotes reports whether name cannot be shown as it is: it holds a
// byte or rune that does not print, or invalid UTF-8, or it starts with a
// double quote, or a part of it does (so that reading it back is never
// ambiguous).
func needsQuotes(name string) bool {
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '"' && (i == 0 || name[i-1] == '/') {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && size == 1 || !strconv.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// readName turns a path argument back into the name it shows: the whole
// argument, or each part of it between slashes, when it is a quoted string
// as shownName writes it (and a valid one), is unquoted; anything else is
// kept as it is. A file whose name starts with a double quote is thus
// named in its quoted form, as it is shown.
func readName(p string) string {
	if !strings.Contains(p, `"`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		if p[i] == '/' {
			b.WriteByte('/')
			i++
			continue
		}
		if p[i] == '"' && (i == 0 || p[i-1] == '/') {
			if q, err := strconv.QuotedPrefix(p[i:]); err == nil {
				if j := i + len(q); j == len(p) || p[j] == '/' {
					if u, err := strconv.Unquote(q); err == nil {
						b.WriteString(u)
						i = j
						continue
					}
				}
			}
		}
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			b.WriteString(p[i:])
			break
		}
		b.WriteString(p[i : i+j])
		i += j
	}
	return b.String()
}
