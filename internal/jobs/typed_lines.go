package jobs

import "unicode/utf8"

// maxTypedLine bounds the text a job keeps of the line being typed into
// it: past it, the line's beginning is dropped.
const maxTypedLine = 64 << 10

// Typed returns the lines text would enter into the job, as a terminal's
// line discipline would see them: for each Enter (CR or LF) in text, the
// line typed since the previous Enter, earlier writes included. Backspace
// and DEL remove a character, Ctrl-W a word, Ctrl-U and Ctrl-C the whole
// line; escape sequences (arrow keys) and other control characters are
// dropped. It changes nothing: [Job.Write] records what was typed.
func (j *Job) Typed(text string) []string {
	j.mu.Lock()
	line := string(j.typed)
	j.mu.Unlock()
	lines, _ := typeLines(line, text)
	return lines
}

// typeLines applies text to the pending line: it returns the lines
// entered and what stays pending.
func typeLines(pending, text string) (lines []string, rest string) {
	line := []byte(pending)
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\r' || c == '\n':
			if c == '\n' && i > 0 && text[i-1] == '\r' {
				continue // CR LF is one Enter
			}
			lines = append(lines, string(line))
			line = line[:0]
		case c == 0x7f || c == '\b':
			if len(line) > 0 {
				_, n := utf8.DecodeLastRune(line)
				line = line[:len(line)-n]
			}
		case c == 0x17: // Ctrl-W: the last word and the blanks after it
			for len(line) > 0 && line[len(line)-1] == ' ' {
				line = line[:len(line)-1]
			}
			for len(line) > 0 && line[len(line)-1] != ' ' {
				line = line[:len(line)-1]
			}
		case c == 0x15 || c == 0x03: // Ctrl-U, Ctrl-C
			line = line[:0]
		case c == 0x1b: // an escape sequence: ESC [ params final, ESC O x, ESC x
			i = skipEscape(text, i)
		case c == '\t':
			line = append(line, ' ')
		case c < ' ':
		default:
			line = append(line, c)
		}
		if len(line) > maxTypedLine {
			line = line[len(line)-maxTypedLine:]
		}
	}
	return lines, string(line)
}

// skipEscape returns the index of the last byte of the escape sequence
// starting at text[i].
func skipEscape(text string, i int) int {
	if i+1 >= len(text) {
		return i
	}
	switch text[i+1] {
	case '[':
		for k := i + 2; k < len(text); k++ {
			if text[k] >= 0x40 && text[k] <= 0x7e {
				return k
			}
		}
		return len(text) - 1
	case 'O':
		return min(i+2, len(text)-1)
	}
	return i + 1
}
