package codetools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/media"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// readBufSize is read_file's read buffer: memory stays bounded by it and
// the byte cap, whatever the file's size.
const readBufSize = 64 << 10

func (c *CodeTools) readFileSpec() toolSpec {
	maxLines, maxBytes := c.cfg.readMaxLines, textutil.HumanSize(int64(c.cfg.readMaxBytes))
	desc := fmt.Sprintf(`Read a file and return what it holds: a text file's text as it is, without line numbers, `+
		`or an image (PNG, JPEG, GIF, WebP) or a PDF document of up to %s as it is, for you to look at. `+
		`One call returns at most %d lines or %s of text, whichever comes first, and never cuts a line in half; `+
		`when more remains, a notice at the end says which offset to use to continue. `+
		`Use offset (1-based line) and limit to read a part of a large file. `+
		`Other binary files are refused (use file_info to see their type); for a folder use list_directory or tree; `+
		`to find where something is in many files use grep first.`, textutil.HumanSize(c.cfg.mediaMaxBytes), maxLines, maxBytes)
	return makeSpec("read_file", desc, schemaObject(map[string]any{
		"path":   pathProperty("File to read, relative to the working directory (an absolute path inside it works too)."),
		"offset": map[string]any{"type": "integer", "minimum": 1, "description": "Line number to start reading from, 1-based (default 1)."},
		"limit":  map[string]any{"type": "integer", "minimum": 1, "description": fmt.Sprintf("Maximum number of lines to read (default and cap: %d, or %s).", maxLines, maxBytes)},
	}, "path"), llmtoolkit.Annotations{ReadOnly: true, Idempotent: true}, c.readFile)
}

func (c *CodeTools) readFile(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", "")
	rel, err := c.canonical(ctx, "path", p, false)
	if err != nil {
		return "", err
	}
	offset := max(intArg(args, "offset", 1), 1)
	limit := intArg(args, "limit", 0)
	f, info, err := c.openContents(ctx, p, rel)
	if err != nil {
		return "", err
	}
	defer f.Close()
	br := newReader(ctx, f)
	head, _ := br.Peek(textutil.SniffLen)
	if mediaType, ok := media.Sniff(head); ok {
		if err := c.checkMediaSize(shownPath(rel), mediaType, info.Size(), head); err != nil {
			return "", err
		}
		return c.readMedia(ctx, shownPath(rel), baseName(rel), mediaType, info.Size(), br)
	}
	if mime, binary := sniffMIME(head); binary {
		return "", fmt.Errorf("%s is a binary file (%s, %s); read_file shows text only: use file_info for its details",
			p, mime, textutil.HumanSize(info.Size()))
	}
	r := lineReader{br: br, max: c.cfg.readMaxBytes}

	// Skip to offset.
	lineNo := 0
	for lineNo < offset-1 {
		n, _, err := r.next(false)
		if err != nil {
			return "", c.scanError(p, fmt.Sprintf("after line %d", lineNo), err)
		}
		if n < 0 {
			return "", fmt.Errorf("offset %d is beyond end of file (%d lines total)", offset, lineNo)
		}
		lineNo++
	}

	var out bytes.Buffer
	shown := 0
	var byLimit, byCap, byBytes, cut bool
	var cutLen int64
	for {
		if limit > 0 && shown == limit {
			byLimit = true
			break
		}
		if shown == c.cfg.readMaxLines {
			byCap = true
			break
		}
		n, line, err := r.next(true)
		if err != nil {
			return "", c.scanError(p, fmt.Sprintf("after line %d", lineNo), err)
		}
		if n < 0 {
			break
		}
		lineNo++
		add := int64(len(line))
		if shown > 0 {
			add++
		}
		if n > int64(len(line)) || int64(out.Len())+add > int64(c.cfg.readMaxBytes) {
			if shown == 0 {
				out.WriteString(textutil.CutUTF8(string(line), c.cfg.readMaxBytes))
				shown, cut, cutLen = 1, true, n
			} else {
				lineNo-- // read but not shown
				byCap, byBytes = true, true
			}
			break
		}
		if shown > 0 {
			out.WriteByte('\n')
		}
		out.Write(line)
		shown++
	}
	if offset > 1 && shown == 0 {
		return "", fmt.Errorf("offset %d is beyond end of file (%d lines total)", offset, lineNo)
	}
	rest, err := r.countRest()
	if err != nil {
		return "", c.scanError(p, fmt.Sprintf("after line %d", lineNo), err)
	}
	if byBytes {
		rest++ // the line that did not fit
	}
	first, last := offset, offset+shown-1
	total := last + rest
	content := out.String()
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayFile, Payload: FilePayload{
		Path: shownPath(rel), Content: content, StartLine: first, EndLine: last,
		TotalLines: total, Truncated: rest > 0 || cut,
	}})
	if total == 0 {
		return "(empty file)", nil
	}
	var notice string
	switch {
	case cut:
		shownSize := textutil.HumanSize(int64(out.Len()))
		notice = fmt.Sprintf("[Line %d is %s, longer than the %s limit: only its first %s are shown. "+
			"To read more of it use bash: sed -n '%dp' %s | tail -c +%d | head -c %d",
			first, textutil.HumanSize(cutLen), textutil.HumanSize(int64(c.cfg.readMaxBytes)), shownSize,
			first, shellQuote(p), out.Len()+1, c.cfg.readMaxBytes)
		if rest > 0 {
			notice += fmt.Sprintf(". Use offset=%d to continue.]", last+1)
		} else {
			notice += "]"
		}
	case rest > 0 && byCap:
		limitNote := ""
		if byBytes {
			limitNote = fmt.Sprintf(" (%s limit)", textutil.HumanSize(int64(c.cfg.readMaxBytes)))
		}
		notice = fmt.Sprintf("[Showing lines %d-%d of %d%s. Use offset=%d to continue.]", first, last, total, limitNote, last+1)
	case rest > 0 && byLimit:
		notice = fmt.Sprintf("[%d more lines in file. Use offset=%d to continue.]", rest, last+1)
	}
	if notice == "" {
		return content, nil
	}
	return content + "\n\n" + notice, nil
}

// newReader buffers r and checks ctx before every read from it: a scan
// through the reader stops within one buffer (64 KiB) of the context's
// end, whatever its lines look like (one huge line of a sparse file's NUL
// bytes, or millions of empty ones), at no cost per line.
func newReader(ctx context.Context, r io.Reader) *bufio.Reader {
	return bufio.NewReaderSize(textutil.ContextReader(ctx, r), readBufSize)
}

// lineReader reads lines in bounded memory.
type lineReader struct {
	br   *bufio.Reader
	max  int    // bytes of a line kept
	line []byte // reused buffer
}

// next reads one line. It returns the line's length without its "\n"
// (-1 at the end of the file) and, when keep, its first max+1 bytes at
// most (so that a line longer than max is seen as such).
func (r *lineReader) next(keep bool) (int64, []byte, error) {
	r.line = r.line[:0]
	var n int64
	started := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(chunk) > 0 {
			started = true
		}
		body := chunk
		if err == nil {
			body = chunk[:len(chunk)-1]
		}
		n += int64(len(body))
		if keep && len(r.line) <= r.max {
			room := r.max + 1 - len(r.line)
			r.line = append(r.line, body[:min(room, len(body))]...)
		}
		switch {
		case err == nil:
			return n, r.line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !started {
				return -1, nil, nil
			}
			return n, r.line, nil
		default:
			return 0, nil, err
		}
	}
}

// countRest counts the lines left, in bounded memory.
func (r *lineReader) countRest() (int, error) {
	buf := make([]byte, readBufSize)
	lines := 0
	var last byte = '\n'
	for {
		n, err := r.br.Read(buf)
		if n > 0 {
			lines += bytes.Count(buf[:n], []byte{'\n'})
			last = buf[n-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		lines++
	}
	return lines, nil
}

// scanError reports why a scan of p stopped (where says at which point):
// the call's deadline or cancellation (wrapped, for errors.Is), or a read
// error.
func (c *CodeTools) scanError(p, where string, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("reading %s timed out %s: %w", p, where, err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("reading %s was cancelled %s: %w", p, where, err)
	}
	return c.conf.FileError(p, err)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
