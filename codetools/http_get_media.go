package codetools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"

	"github.com/llmtoolkit/llmtoolkit/internal/media"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// fetchMedia answers a successful response whose body is an image or a
// PDF (recognised by its first bytes, whatever its Content-Type says) as
// read_file does: the bytes attached, a line for the model, the same
// limits ([WithMediaLimits]), a Content-Length over the cap refused
// before the body is read. isMedia is false for any other body.
func (c *CodeTools) fetchMedia(ctx context.Context, u *url.URL, resp *http.Response, head []byte, body io.Reader) (out string, isMedia bool, err error) {
	mediaType, ok := media.Sniff(head)
	if !ok {
		return "", false, nil
	}
	final := resp.Request.URL
	shown := textutil.CutUTF8(final.Redacted(), httpMaxURLChars)
	if err := c.checkMediaSize(shown, mediaType, resp.ContentLength, head); err != nil {
		return "", true, err
	}
	data, err := readAtMost(body, resp.ContentLength, c.cfg.mediaMaxBytes)
	if err != nil {
		if errors.Is(err, errOverCap) {
			return "", true, fmt.Errorf("%w: %s is %s over the %s cap on images and documents (codetools.WithMediaLimits)",
				ErrMediaTooLarge, shown, mediaKind(mediaType), textutil.HumanSize(c.cfg.mediaMaxBytes))
		}
		return "", true, fmt.Errorf("http_get %s: reading the body: %w", u.Redacted(), unwrapURLError(err))
	}
	info, err := media.Check(mediaType, data, c.cfg.mediaMaxPixels)
	if err := c.mediaError(shown, mediaType, err); err != nil {
		return "", true, err
	}
	showWebpage(ctx, shown, resp.StatusCode, mediaType, false)
	name := path.Base(final.Path)
	if name == "/" || name == "." {
		name = "document.pdf"
	}
	attachMedia(ctx, name, mediaType, data)
	header := fmt.Sprintf("HTTP %s · %s · %s", resp.Status, orUnknown(resp.Header.Get("Content-Type")), textutil.HumanSize(int64(len(data))))
	return header + "\n" + mediaLine(shown, info, len(data)), true, nil
}

// sniffLen is how much of a body is read to recognise an image or a PDF.
const sniffLen = 512

// sniffBody reads the first bytes of body (fewer when it ends or fails
// sooner) and returns them, and a reader of the whole body: those bytes,
// then the rest, then the error the first read stopped with, if any (so
// that a body cut short is still reported as such, with its cause).
func sniffBody(body io.Reader) ([]byte, io.Reader) {
	head := make([]byte, sniffLen)
	n := 0
	var err error
	for n < sniffLen && err == nil {
		var m int
		m, err = body.Read(head[n:])
		n += m
	}
	head = head[:n]
	switch {
	case err == nil:
		return head, io.MultiReader(bytes.NewReader(head), body)
	case errors.Is(err, io.EOF):
		return head, bytes.NewReader(head)
	}
	return head, io.MultiReader(bytes.NewReader(head), failedReader{err})
}

// failedReader returns its error.
type failedReader struct{ err error }

func (r failedReader) Read([]byte) (int, error) { return 0, r.err }
