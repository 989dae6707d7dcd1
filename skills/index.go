package skills

import (
	"fmt"
	"strings"
	"unicode"
)

// DefaultIndexBytes bounds [Set.Index].
const DefaultIndexBytes = 16 << 10

// Index returns the skills' names and descriptions for a system prompt,
// in this format (one line per skill, sorted by name, so the text, and the
// provider's prompt cache, stay the same while the skills do):
//
//	<available_skills>
//	<skill name="pdf-processing">Extracts text and tables from PDF files. Use when …</skill>
//	</available_skills>
//
// A description is data written by the skill's author, never the host's
// instructions: it is shown on one line (line breaks and tabs become
// spaces), with &, <, > and " escaped as in XML, and control and
// bidirectional-override characters removed, so that it cannot close the
// block, open another, or pass for a line of the host's prompt. The text
// is at most maxBytes bytes (0: [DefaultIndexBytes]); skills that do not
// fit are left out whole, and a last line inside the block says how many:
// "<!-- N more skills not listed -->". An empty set gives an empty block.
func (s *Set) Index(maxBytes int) string {
	if maxBytes <= 0 {
		maxBytes = DefaultIndexBytes
	}
	const head, tail = "<available_skills>\n", "</available_skills>\n"
	var b strings.Builder
	b.WriteString(head)
	list := s.Skills()
	for i, sk := range list {
		line := fmt.Sprintf("<skill name=%q>%s</skill>\n", sk.Name, Escape(sk.Description))
		// Leave room for the closing line and, if another skill follows,
		// the note of the ones left out.
		room := maxBytes - len(tail)
		if i < len(list)-1 {
			room -= len(omitted(len(list)))
		}
		if b.Len()+len(line) > room {
			if note := omitted(len(list) - i); b.Len()+len(note)+len(tail) <= maxBytes {
				b.WriteString(note)
			}
			break
		}
		b.WriteString(line)
	}
	b.WriteString(tail)
	return b.String()
}

func omitted(n int) string { return fmt.Sprintf("<!-- %d more skills not listed -->\n", n) }

// Escape returns text from a skill's author as one line of data: line
// breaks and tabs as spaces, control and bidirectional-override
// characters removed, &, <, > and " escaped as in XML.
func Escape(text string) string {
	if strings.IndexFunc(text, needsEscape) < 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r), r == '\u2028', r == '\u2029', r == '\ufeff':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsEscape(r rune) bool {
	switch r {
	case '&', '<', '>', '"', '\u2028', '\u2029', '\ufeff':
		return true
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}
