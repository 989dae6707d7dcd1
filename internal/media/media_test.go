package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func encoded(t testing.TB, enc func(*bytes.Buffer, image.Image) error, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var buf bytes.Buffer
	require.NoError(t, enc(&buf, img))
	return buf.Bytes()
}

// PNGHeader returns a PNG signature and IHDR chunk claiming w x h pixels,
// with a correct checksum, and nothing after it.
func pngHeader(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	b = binary.BigEndian.AppendUint32(b, w)
	b = binary.BigEndian.AppendUint32(b, h)
	b = append(b, 8, 6, 0, 0, 0)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[12:]))
}

func webpVP8L(w, h int) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8L\x05\x00\x00\x00\x2f")
	b = binary.LittleEndian.AppendUint32(b, uint32(w-1)|uint32(h-1)<<14)
	b = append(b, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[4:8], uint32(len(b)-8))
	return b
}

func webpVP8X(w, h int) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00")
	b = append(b, byte(w-1), byte((w-1)>>8), byte((w-1)>>16), byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
	binary.LittleEndian.PutUint32(b[4:8], uint32(len(b)-8))
	return b
}

func TestCheck(t *testing.T) {
	pngBytes := encoded(t, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) }, 64, 48)
	jpegBytes := encoded(t, func(b *bytes.Buffer, i image.Image) error { return jpeg.Encode(b, i, nil) }, 33, 17)
	gifBytes := encoded(t, func(b *bytes.Buffer, i image.Image) error { return gif.Encode(b, i, nil) }, 20, 10)
	pdf := []byte("%PDF-1.7\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n")
	huge := pngHeader(100_000, 100_000)
	cases := []struct {
		name    string
		data    []byte
		typ     string
		w, h    int
		wantErr error
	}{
		{"png", pngBytes, PNG, 64, 48, nil},
		{"jpeg", jpegBytes, JPEG, 33, 17, nil},
		{"gif", gifBytes, GIF, 20, 10, nil},
		{"webp lossless", webpVP8L(300, 200), WebP, 300, 200, nil},
		{"webp extended", webpVP8X(4000, 3000), WebP, 4000, 3000, nil},
		{"pdf", pdf, PDF, 0, 0, nil},
		{"png 100k x 100k header", huge, PNG, 0, 0, ErrTooManyPixels},
		{"png cut in its header", pngBytes[:20], PNG, 0, 0, ErrMalformed},
		{"png cut after its header", pngBytes[:len(pngBytes)-20], PNG, 0, 0, ErrMalformed},
		{"png with a bad checksum", append(append([]byte{}, pngBytes[:29]...), 0, 0, 0, 0), PNG, 0, 0, ErrMalformed},
		{"png of 0 pixels", pngHeader(0, 10), PNG, 0, 0, ErrMalformed},
		{"jpeg cut short", jpegBytes[:len(jpegBytes)/2], JPEG, 0, 0, ErrMalformed},
		{"jpeg without frame", []byte{0xff, 0xd8, 0xff, 0xda, 0, 2, 0xff, 0xd9}, JPEG, 0, 0, ErrMalformed},
		{"gif without trailer", gifBytes[:len(gifBytes)-1], GIF, 0, 0, ErrMalformed},
		{"webp shorter than its RIFF size", webpVP8L(3, 3)[:28], WebP, 0, 0, ErrMalformed},
		{"pdf without %%EOF", []byte("%PDF-1.7\n" + string(bytes.Repeat([]byte("[[[[[[[["), 10_000))), PDF, 0, 0, ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			typ, ok := Sniff(tc.data)
			require.True(t, ok)
			require.Equal(t, tc.typ, typ)
			info, err := Check(typ, tc.data, 64<<20)
			if tc.wantErr != nil {
				require.Error(t, err)
				assert.True(t, errors.Is(err, tc.wantErr), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.w, info.Width)
			assert.Equal(t, tc.h, info.Height)
		})
	}
}

// Refusing a 100k x 100k header allocates nothing in proportion to it.
func TestHugeHeaderAllocatesNothing(t *testing.T) {
	huge := pngHeader(100_000, 100_000)
	allocs := testing.AllocsPerRun(100, func() { _, _ = Header(PNG, huge, 64<<20) })
	assert.LessOrEqual(t, allocs, 8.0, "only the error's own allocations")
}

func TestSniffLeavesTextAlone(t *testing.T) {
	for _, s := range []string{"<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>", "package main", "", "RIFF", "%PDF"} {
		_, ok := Sniff([]byte(s))
		assert.False(t, ok, s)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add(pngHeader(10, 10))
	f.Add(webpVP8L(3, 3))
	f.Add(webpVP8X(3, 3))
	f.Add([]byte{0xff, 0xd8, 0xff, 0xc0, 0, 11, 8, 0, 10, 0, 10, 0xff, 0xd9})
	f.Add([]byte("GIF89a\x01\x00\x01\x00;"))
	f.Fuzz(func(t *testing.T, b []byte) {
		typ, ok := Sniff(b)
		if !ok {
			return
		}
		info, err := Check(typ, b, 1<<20)
		if err == nil && info.IsImage() {
			if info.Width <= 0 || info.Height <= 0 || int64(info.Width)*int64(info.Height) > 1<<20 {
				t.Fatalf("accepted %dx%d", info.Width, info.Height)
			}
		}
	})
}
