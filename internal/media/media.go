// Package media recognises the images and documents read_file and http_get
// give a model (PNG, JPEG, GIF, WebP, PDF) by their first bytes, and reads
// an image's pixel dimensions from its header alone: nothing is decoded,
// nothing is allocated in proportion to what a header claims, and a walk
// through a JPEG's segments is bounded by the bytes given. A header that
// claims more pixels than the caller allows is refused.
//
// PDFs are not parsed at all (the model's provider reads them): [Check]
// looks for the "%PDF-" head and the "%%EOF" marker near the end, so a
// PDF bomb (deep object nesting, huge streams) costs what its bytes cost.
package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The media types this package recognises.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	GIF  = "image/gif"
	WebP = "image/webp"
	PDF  = "application/pdf"
)

// ErrMalformed is wrapped by the error for bytes that start as a format
// but are not a whole, valid header or file of it (cut short, a bad
// checksum, a zero size).
var ErrMalformed = errors.New("malformed")

// ErrTooManyPixels is wrapped by the error for an image whose header
// claims more pixels than allowed.
var ErrTooManyPixels = errors.New("too many pixels")

// Info is what [Check] learns of a file.
type Info struct {
	// MediaType is one of the constants above.
	MediaType string
	// Width and Height are an image's pixel dimensions (0 for a PDF).
	Width, Height int
}

// IsImage reports whether the media type is an image this package knows.
func (i Info) IsImage() bool { return i.MediaType != PDF }

// Sniff returns the media type of head, the first bytes of a file (at
// least 30 for a WebP's kind, 5 for the others), when it is one this package
// knows. It reads the magic numbers only; [Check] reads the rest.
func Sniff(head []byte) (string, bool) {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return PNG, true
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return JPEG, true
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return GIF, true
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return WebP, true
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return PDF, true
	}
	return "", false
}

// Header reads an image's dimensions from the first bytes of a file
// (PNG, GIF and WebP keep them in the first 30; a JPEG may need the
// whole file) and refuses one of more than maxPixels pixels (maxPixels <=
// 0: no limit). For a PDF it returns the media type alone.
func Header(mediaType string, data []byte, maxPixels int64) (Info, error) {
	info := Info{MediaType: mediaType}
	var err error
	switch mediaType {
	case PNG:
		info.Width, info.Height, err = pngSize(data)
	case GIF:
		info.Width, info.Height, err = gifSize(data)
	case WebP:
		info.Width, info.Height, err = webpSize(data)
	case JPEG:
		info.Width, info.Height, err = jpegSize(data)
	case PDF:
		if !bytes.HasPrefix(data, []byte("%PDF-")) {
			err = fmt.Errorf("%w: no %%PDF- header", ErrMalformed)
		}
		return info, err
	default:
		return info, fmt.Errorf("%w: unknown media type %q", ErrMalformed, mediaType)
	}
	if err != nil {
		return info, err
	}
	if info.Width <= 0 || info.Height <= 0 {
		return info, fmt.Errorf("%w: the header says %dx%d pixels", ErrMalformed, info.Width, info.Height)
	}
	if maxPixels > 0 && int64(info.Width)*int64(info.Height) > maxPixels {
		return info, fmt.Errorf("%w: the header says %dx%d pixels (%d), more than the %d allowed", ErrTooManyPixels,
			info.Width, info.Height, int64(info.Width)*int64(info.Height), maxPixels)
	}
	return info, nil
}

// Check is [Header] on a whole file, which it also checks is not cut
// short: a PNG ends with its IEND chunk, a GIF with its trailer, a JPEG
// holds an end-of-image marker in its last 4 KiB, a WebP is as long as
// its RIFF header says, a PDF holds "%%EOF" in its last 1 KiB.
func Check(mediaType string, data []byte, maxPixels int64) (Info, error) {
	info, err := Header(mediaType, data, maxPixels)
	if err != nil {
		return info, err
	}
	complete := true
	switch mediaType {
	case PNG:
		complete = bytes.HasSuffix(data, []byte("\x00\x00\x00\x00IEND\xae\x42\x60\x82"))
	case GIF:
		complete = bytes.HasSuffix(data, []byte{0x3b})
	case JPEG:
		complete = bytes.Contains(tail(data, 4<<10), []byte{0xff, 0xd9})
	case WebP:
		complete = int64(binary.LittleEndian.Uint32(data[4:8]))+8 <= int64(len(data))
	case PDF:
		complete = bytes.Contains(tail(data, 1<<10), []byte("%%EOF"))
	}
	if !complete {
		return info, fmt.Errorf("%w: the file is cut short (no end marker)", ErrMalformed)
	}
	return info, nil
}

func tail(b []byte, n int) []byte { return b[max(len(b)-n, 0):] }

func short(format string) error {
	return fmt.Errorf("%w: the %s header is cut short", ErrMalformed, format)
}

func pngSize(b []byte) (int, int, error) {
	// signature (8), IHDR length (4) = 13, "IHDR", width, height (4 each),
	// 5 more bytes, CRC (4): 33 bytes.
	if len(b) < 33 {
		return 0, 0, short("PNG")
	}
	if binary.BigEndian.Uint32(b[8:12]) != 13 || !bytes.Equal(b[12:16], []byte("IHDR")) {
		return 0, 0, fmt.Errorf("%w: the PNG does not start with its IHDR chunk", ErrMalformed)
	}
	if crc32.ChecksumIEEE(b[12:29]) != binary.BigEndian.Uint32(b[29:33]) {
		return 0, 0, fmt.Errorf("%w: the PNG's IHDR checksum is wrong", ErrMalformed)
	}
	w, h := binary.BigEndian.Uint32(b[16:20]), binary.BigEndian.Uint32(b[20:24])
	if w > 1<<31-1 || h > 1<<31-1 {
		return 0, 0, fmt.Errorf("%w: the PNG's size is out of range", ErrMalformed)
	}
	return int(w), int(h), nil
}

func gifSize(b []byte) (int, int, error) {
	if len(b) < 10 {
		return 0, 0, short("GIF")
	}
	return int(binary.LittleEndian.Uint16(b[6:8])), int(binary.LittleEndian.Uint16(b[8:10])), nil
}

func webpSize(b []byte) (int, int, error) {
	if len(b) < 30 {
		return 0, 0, short("WebP")
	}
	switch string(b[12:16]) {
	case "VP8X":
		w := 1 + (int(b[24]) | int(b[25])<<8 | int(b[26])<<16)
		h := 1 + (int(b[27]) | int(b[28])<<8 | int(b[29])<<16)
		return w, h, nil
	case "VP8 ":
		if !bytes.Equal(b[23:26], []byte{0x9d, 0x01, 0x2a}) {
			return 0, 0, fmt.Errorf("%w: the WebP's VP8 start code is missing", ErrMalformed)
		}
		return int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff), int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff), nil
	case "VP8L":
		if b[20] != 0x2f {
			return 0, 0, fmt.Errorf("%w: the WebP's VP8L signature is missing", ErrMalformed)
		}
		v := binary.LittleEndian.Uint32(b[21:25])
		return int(v&0x3fff) + 1, int(v>>14&0x3fff) + 1, nil
	}
	return 0, 0, fmt.Errorf("%w: unknown WebP chunk %q", ErrMalformed, b[12:16])
}

// jpegSize walks the segments up to the first start-of-frame marker. Each
// step moves forward by at least two bytes, so the walk is linear in
// len(b).
func jpegSize(b []byte) (int, int, error) {
	i := 2
	for i+4 <= len(b) {
		if b[i] != 0xff {
			return 0, 0, fmt.Errorf("%w: the JPEG has no marker at byte %d", ErrMalformed, i)
		}
		m := b[i+1]
		switch {
		case m == 0xff: // fill byte
			i++
			continue
		case m == 0x01 || m >= 0xd0 && m <= 0xd7: // no length
			i += 2
			continue
		case m == 0xd9 || m == 0xda:
			return 0, 0, fmt.Errorf("%w: the JPEG has no frame header before its image data", ErrMalformed)
		}
		n := int(binary.BigEndian.Uint16(b[i+2 : i+4]))
		if n < 2 {
			return 0, 0, fmt.Errorf("%w: a JPEG segment has length %d", ErrMalformed, n)
		}
		if m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc {
			if i+9 > len(b) {
				return 0, 0, short("JPEG")
			}
			return int(binary.BigEndian.Uint16(b[i+7 : i+9])), int(binary.BigEndian.Uint16(b[i+5 : i+7])), nil
		}
		i += 2 + n
	}
	return 0, 0, short("JPEG")
}
