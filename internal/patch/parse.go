package patch

import (
	"errors"
	"fmt"
	"strings"
)

// The markers of the format.
const (
	beginPatch = "*** Begin Patch"
	endPatch   = "*** End Patch"
	addFile    = "*** Add File: "
	deleteFile = "*** Delete File: "
	updateFile = "*** Update File: "
	moveTo     = "*** Move to: "
	endOfFile  = "*** End of File"
)

// ErrSyntax is wrapped by every error for a patch that is not well formed.
var ErrSyntax = errors.New("malformed patch")

// Kind is what an operation does to its file.
type Kind int

// The kinds of operation.
const (
	Add    Kind = iota + 1 // create a new file
	Delete                 // remove a file
	Update                 // change a file, and maybe move it
)

// String names the kind as the format writes it.
func (k Kind) String() string {
	switch k {
	case Add:
		return "Add File"
	case Delete:
		return "Delete File"
	case Update:
		return "Update File"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Op is one file operation of a patch.
type Op struct {
	Kind Kind
	// Path is the file as the patch names it.
	Path string
	// MoveTo is the new name of an updated file ("" when it stays).
	MoveTo string
	// Content is the text of an added file: its lines, each ending in "\n".
	Content string
	// Hunks are the changes of an updated file, in order.
	Hunks []Hunk
	// Line is the patch line (1-based) of the operation's header; 0 for a
	// diff parsed alone (ParseDiff).
	Line int
}

// Hunk is one change of an updated file: optional "@@" anchors, then
// context (' '), removed ('-') and added ('+') lines.
type Hunk struct {
	// Anchors are the texts of the hunk's "@@ text" lines (a bare "@@"
	// adds none).
	Anchors []string
	// Markers is how many "@@" lines the hunk starts with.
	Markers int
	// Lines are the hunk's lines.
	Lines []Line
	// EOF is set when the hunk ends with "*** End of File": its context
	// is sought at the end of the file first.
	EOF bool
	// Line is the patch line (1-based) where the hunk starts.
	Line int
}

// Line is one line of a hunk.
type Line struct {
	Op   byte // ' ' context, '-' removed, '+' added
	Text string
}

// Parse reads a whole patch: "*** Begin Patch", file operations, "*** End
// Patch". Lines may end in "\n" or "\r\n" (the "\r" is dropped, as the
// reference appliers do); text before the first marker that is only
// whitespace is ignored. A malformed patch is an error wrapping ErrSyntax
// that names the line.
func Parse(text string) ([]Op, error) {
	lines := splitLines(strings.TrimLeft(text, " \t\r\n"))
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != beginPatch {
		return nil, fmt.Errorf("%w: the patch must start with %q", ErrSyntax, beginPatch)
	}
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != endPatch {
		return nil, fmt.Errorf("%w: the patch must end with %q", ErrSyntax, endPatch)
	}
	body := lines[1 : len(lines)-1]
	var ops []Op
	for i := 0; i < len(body); {
		line := body[i]
		header := i + 2 // the patch line of body[i]
		j := i + 1
		for j < len(body) && !isHeader(body[j]) {
			j++
		}
		rest := body[i+1 : j]
		var op Op
		var err error
		switch {
		case strings.HasPrefix(line, addFile):
			op, err = parseAdd(line, rest, header)
		case strings.HasPrefix(line, deleteFile):
			op, err = parseDelete(line, rest, header)
		case strings.HasPrefix(line, updateFile):
			op, err = parseUpdate(line, rest, header)
		default:
			err = fmt.Errorf("%w: line %d: expected %q, %q or %q, got %q",
				ErrSyntax, header, strings.TrimSpace(addFile), strings.TrimSpace(deleteFile), strings.TrimSpace(updateFile), clip(line))
		}
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		i = j
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("%w: the patch holds no file operation", ErrSyntax)
	}
	return ops, nil
}

// splitLines splits at "\n", drops a "\r" before it and the empty line
// after a final "\n".
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

func isHeader(line string) bool {
	return strings.HasPrefix(line, addFile) || strings.HasPrefix(line, deleteFile) || strings.HasPrefix(line, updateFile)
}

// headerPath reads the path of a header line.
func headerPath(line, prefix string, n int) (string, error) {
	p := strings.TrimSpace(line[len(prefix):])
	if p == "" {
		return "", fmt.Errorf("%w: line %d: %q names no path", ErrSyntax, n, clip(line))
	}
	return p, nil
}

func parseAdd(line string, rest []string, n int) (Op, error) {
	p, err := headerPath(line, addFile, n)
	if err != nil {
		return Op{}, err
	}
	content, err := parseAddLines(p, rest, n+1)
	if err != nil {
		return Op{}, err
	}
	return Op{Kind: Add, Path: p, Content: content, Line: n}, nil
}

// parseAddLines reads the "+" lines of an added file, the first at patch
// line n (0: a diff parsed alone, lines counted from 1).
func parseAddLines(p string, rest []string, n int) (string, error) {
	if len(rest) == 0 {
		return "", fmt.Errorf("%w: line %d: Add File %s has no line; each line of the new file starts with \"+\"", ErrSyntax, max(n-1, 1), p)
	}
	var b strings.Builder
	for i, l := range rest {
		if !strings.HasPrefix(l, "+") {
			return "", fmt.Errorf("%w: line %d: in Add File %s every line starts with \"+\", got %q", ErrSyntax, n+i, p, clip(l))
		}
		b.WriteString(l[1:])
		b.WriteByte('\n')
	}
	return b.String(), nil
}

func parseDelete(line string, rest []string, n int) (Op, error) {
	p, err := headerPath(line, deleteFile, n)
	if err != nil {
		return Op{}, err
	}
	if len(rest) > 0 {
		return Op{}, fmt.Errorf("%w: line %d: Delete File %s takes no lines, got %q", ErrSyntax, n+1, p, clip(rest[0]))
	}
	return Op{Kind: Delete, Path: p, Line: n}, nil
}

func parseUpdate(line string, rest []string, n int) (Op, error) {
	p, err := headerPath(line, updateFile, n)
	if err != nil {
		return Op{}, err
	}
	op := Op{Kind: Update, Path: p, Line: n}
	first := n + 1
	if len(rest) > 0 && strings.HasPrefix(rest[0], moveTo) {
		if op.MoveTo, err = headerPath(rest[0], moveTo, n+1); err != nil {
			return Op{}, err
		}
		rest = rest[1:]
		first++
	}
	if len(rest) == 0 && op.MoveTo == "" {
		return Op{}, fmt.Errorf("%w: line %d: Update File %s has no hunk", ErrSyntax, n, p)
	}
	if op.Hunks, err = parseHunks(p, rest, first); err != nil {
		return Op{}, err
	}
	return op, nil
}

// ParseDiff reads the body of one file's update, without file headers (the
// diff of a Responses API update_file operation): hunks, each optionally
// starting with "@@" anchors. Errors name lines counted from 1.
func ParseDiff(path, diff string) ([]Hunk, error) {
	lines := splitLines(diff)
	if len(lines) == 0 {
		return nil, fmt.Errorf("%w: the diff for %s is empty", ErrSyntax, path)
	}
	return parseHunks(path, lines, 1)
}

// ParseCreate reads the diff of a created file without its header (the
// diff of a Responses API create_file operation): every line starts with
// "+". It returns the file's text, each line ending in "\n".
func ParseCreate(path, diff string) (string, error) {
	return parseAddLines(path, splitLines(diff), 1)
}

// parseHunks reads an update's lines, the first at patch line n.
func parseHunks(p string, lines []string, n int) ([]Hunk, error) {
	var hunks []Hunk
	for i := 0; i < len(lines); {
		h := Hunk{Line: n + i}
		for i < len(lines) && (lines[i] == "@@" || strings.HasPrefix(lines[i], "@@ ")) {
			h.Markers++
			if a := strings.TrimPrefix(lines[i], "@@"); strings.TrimSpace(a) != "" {
				h.Anchors = append(h.Anchors, a[1:])
			}
			i++
		}
		if h.Markers == 0 && len(hunks) > 0 {
			return nil, fmt.Errorf("%w: line %d: in Update File %s, hunk %d must start with \"@@\", got %q", ErrSyntax, n+i, p, len(hunks)+1, clip(lines[i]))
		}
	body:
		for i < len(lines) {
			l := lines[i]
			switch {
			case l == endOfFile:
				h.EOF = true
				i++
				break body
			case strings.HasPrefix(l, "@@"):
				break body
			case strings.HasPrefix(l, "***"):
				return nil, fmt.Errorf("%w: line %d: in Update File %s, unexpected %q", ErrSyntax, n+i, p, clip(l))
			case l == "":
				h.Lines = append(h.Lines, Line{Op: ' '})
			case l[0] == ' ' || l[0] == '-' || l[0] == '+':
				h.Lines = append(h.Lines, Line{Op: l[0], Text: l[1:]})
			default:
				return nil, fmt.Errorf("%w: line %d: in Update File %s, hunk %d: a line starts with ' ', '-' or '+', got %q", ErrSyntax, n+i, p, len(hunks)+1, clip(l))
			}
			i++
		}
		if len(h.Lines) == 0 && !h.EOF {
			return nil, fmt.Errorf("%w: line %d: in Update File %s, hunk %d has no line", ErrSyntax, h.Line, p, len(hunks)+1)
		}
		hunks = append(hunks, h)
		if h.EOF && i < len(lines) {
			return nil, fmt.Errorf("%w: line %d: in Update File %s, %q must end the file's hunks, got %q after it", ErrSyntax, n+i, p, endOfFile, clip(lines[i]))
		}
	}
	return hunks, nil
}

// clip cuts a quoted line in an error to a readable length.
func clip(s string) string {
	const n = 120
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
