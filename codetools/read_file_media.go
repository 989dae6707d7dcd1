package codetools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/media"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// The defaults of [WithMediaLimits].
const (
	// DefaultMediaMaxBytes is the largest image or PDF read_file and
	// http_get give the model: 5 MiB.
	DefaultMediaMaxBytes = 5 << 20
	// DefaultMediaMaxPixels is the most pixels an image's header may claim:
	// 8000 x 8000, the largest image the providers take.
	DefaultMediaMaxPixels = 8000 * 8000
)

// ErrMediaTooLarge is wrapped by the error for an image or a PDF over the
// size cap, or an image whose header claims more pixels than allowed (see
// [WithMediaLimits]).
var ErrMediaTooLarge = errors.New("media too large")

// ErrMalformedMedia is wrapped by the error for a file that starts as an
// image or a PDF but is not a whole, valid one (cut short, a bad header).
var ErrMalformedMedia = errors.New("malformed image or document")

// WithMediaLimits sets what read_file and http_get give the model as an
// image or a document: files of at most maxBytes bytes (default
// [DefaultMediaMaxBytes]) and images whose header claims at most maxPixels
// pixels (default [DefaultMediaMaxPixels]). Beyond either the call fails
// with an error wrapping [ErrMediaTooLarge], before the file's bytes are
// read. A value <= 0 keeps the default.
func WithMediaLimits(maxBytes, maxPixels int64) Option {
	return func(c *config) {
		if maxBytes > 0 {
			c.mediaMaxBytes = maxBytes
		}
		if maxPixels > 0 {
			c.mediaMaxPixels = maxPixels
		}
	}
}

// mediaKind names a media type in answers: "an image" or "a PDF document".
func mediaKind(mediaType string) string {
	if mediaType == media.PDF {
		return "a PDF document"
	}
	return "an image"
}

// checkMediaSize refuses a file of size bytes over the cap, and an image
// whose first bytes (head) already show a bad or too large header, before
// anything more is read.
func (c *CodeTools) checkMediaSize(shown, mediaType string, size int64, head []byte) error {
	if size > c.cfg.mediaMaxBytes {
		return fmt.Errorf("%w: %s is %s (%s, %s), over the %s cap on images and documents (codetools.WithMediaLimits)",
			ErrMediaTooLarge, shown, mediaKind(mediaType), mediaType, textutil.HumanSize(size), textutil.HumanSize(c.cfg.mediaMaxBytes))
	}
	if mediaType == media.JPEG || mediaType == media.PDF {
		return nil // a JPEG's frame header may be far in: checked on the whole file
	}
	_, err := media.Header(mediaType, head, c.cfg.mediaMaxPixels)
	return c.mediaError(shown, mediaType, err)
}

// mediaError words an error of package media for the model.
func (c *CodeTools) mediaError(shown, mediaType string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, media.ErrTooManyPixels):
		return fmt.Errorf("%w: %s is an image (%s) too large to show: %v (codetools.WithMediaLimits)", ErrMediaTooLarge, shown, mediaType, err)
	case errors.Is(err, media.ErrMalformed):
		return fmt.Errorf("%w: %s looks like %s (%s) but is not a valid one: %v", ErrMalformedMedia, shown, mediaKind(mediaType), mediaType, err)
	}
	return err
}

// readMedia reads the rest of an image or PDF whose head was sniffed,
// at most the cap (a file that grew past it is refused), checks it whole,
// attaches it to the call and returns the line the model reads with it.
// The bytes are read into one buffer of the file's size: the only copy
// read_file makes.
func (c *CodeTools) readMedia(ctx context.Context, shown, name, mediaType string, size int64, r io.Reader) (string, error) {
	data, err := readAtMost(r, size, c.cfg.mediaMaxBytes)
	if err != nil {
		if errors.Is(err, errOverCap) {
			return "", fmt.Errorf("%w: %s grew past the %s cap on images and documents while it was read", ErrMediaTooLarge, shown, textutil.HumanSize(c.cfg.mediaMaxBytes))
		}
		return "", err
	}
	info, err := media.Check(mediaType, data, c.cfg.mediaMaxPixels)
	if err := c.mediaError(shown, mediaType, err); err != nil {
		return "", err
	}
	attachMedia(ctx, name, mediaType, data)
	return mediaLine(shown, info, len(data)), nil
}

// attachMedia attaches data as an image part, or a file part for a PDF.
func attachMedia(ctx context.Context, name, mediaType string, data []byte) {
	if mediaType == media.PDF {
		llmtoolkit.Attach(ctx, llmtoolkit.FilePart(name, mediaType, data))
		return
	}
	llmtoolkit.Attach(ctx, llmtoolkit.ImagePart(mediaType, data))
}

// mediaLine is the text the model reads beside an image or a PDF.
func mediaLine(shown string, info media.Info, n int) string {
	if info.IsImage() {
		return fmt.Sprintf("%s: %s, %s, %dx%d pixels (the image is attached)", shown, info.MediaType, textutil.HumanSize(int64(n)), info.Width, info.Height)
	}
	return fmt.Sprintf("%s: %s, %s (the document is attached whole; the model reads its pages)", shown, info.MediaType, textutil.HumanSize(int64(n)))
}

var errOverCap = errors.New("over the cap")

// readAtMost reads r to its end into one buffer sized for hint bytes, and
// fails with errOverCap past limit bytes.
func readAtMost(r io.Reader, hint, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(max(hint, 512), limit)+1)
	for {
		if int64(len(buf)) > limit {
			return nil, errOverCap
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow: the file grew after its size was read
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			if int64(len(buf)) > limit {
				return nil, errOverCap
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// baseName is the last element of a slash path, for a file part's name.
func baseName(p string) string { return path.Base(slashPath(p)) }
