package codetools

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// testPNG returns a valid PNG of w x h pixels, padded with an ancillary
// chunk to at least size bytes.
func testPNG(t testing.TB, w, h, size int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{0, 128, 255, 255})
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	b := buf.Bytes()
	if pad := size - len(b) - 12; pad > 0 {
		// an ancillary private chunk ("teXt"-like, ignored by decoders) before IEND
		end := b[len(b)-12:]
		chunk := binary.BigEndian.AppendUint32(nil, uint32(pad))
		chunk = append(chunk, "prVt"...)
		chunk = append(chunk, make([]byte, pad)...)
		chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
		b = append(append(append([]byte{}, b[:len(b)-12]...), chunk...), end...)
	}
	return b
}

// hugeHeaderPNG is a PNG whose IHDR claims 100,000 x 100,000 pixels,
// padded to size bytes.
func hugeHeaderPNG(size int) []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	b = binary.BigEndian.AppendUint32(b, 100_000)
	b = binary.BigEndian.AppendUint32(b, 100_000)
	b = append(b, 8, 6, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[12:]))
	b = append(b, make([]byte, max(size-len(b)-12, 0))...)
	return append(b, "\x00\x00\x00\x00IEND\xae\x42\x60\x82"...)
}

func encodeImage(t testing.TB, enc func(*bytes.Buffer, image.Image) error) []byte {
	var buf bytes.Buffer
	require.NoError(t, enc(&buf, image.NewRGBA(image.Rect(0, 0, 7, 5))))
	return buf.Bytes()
}

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// The hostile-input table of read_file's images and documents: every case
// is a clear error or a bounded answer, and nothing outside the root is
// read.
func TestReadFileMedia(t *testing.T) {
	outside := t.TempDir()
	secret := testPNG(t, 4, 4, 0)
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.png"), secret, 0o644))
	pngBytes := testPNG(t, 64, 48, 0)
	pdf := []byte("%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")
	bomb := append([]byte("%PDF-1.7\n1 0 obj\n"), bytes.Repeat([]byte("<< /A "), 200_000)...)
	bomb = append(append(bomb, bytes.Repeat([]byte(">> "), 200_000)...), "\nendobj\n%%EOF\n"...)
	files := map[string][]byte{
		"chart.png":       pngBytes,
		"photo.jpg":       encodeImage(t, func(b *bytes.Buffer, i image.Image) error { return jpeg.Encode(b, i, nil) }),
		"anim.gif":        encodeImage(t, func(b *bytes.Buffer, i image.Image) error { return gif.Encode(b, i, nil) }),
		"pic.webp":        []byte("RIFF\x16\x00\x00\x00WEBPVP8L\x0a\x00\x00\x00\x2f\x09\x40\x01\x00\x00\x00\x00\x00\x00"),
		"report.pdf":      pdf,
		"bomb.pdf":        bomb,
		"logo.svg":        []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`),
		"cut.png":         pngBytes[:len(pngBytes)-30],
		"text.png":        []byte("not an image at all\n"),
		"image.txt":       pngBytes,
		"huge-header.png": hugeHeaderPNG(4 << 20),
		"big.png":         testPNG(t, 16, 16, 6<<20),
	}
	root, c := newTestTools(t)
	for name, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), b, 0o644))
	}
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(root, "link.png")))

	cases := []struct {
		path     string
		wantErr  error  // errors.Is
		errText  string // in the error
		text     string // in the content
		kind     llmtoolkit.PartKind
		mimeType string
		maxAlloc uint64 // bytes allocated at most (0: not checked)
	}{
		{path: "chart.png", text: "chart.png: image/png, ", kind: llmtoolkit.PartImage, mimeType: "image/png"},
		{path: "photo.jpg", text: "7x5 pixels", kind: llmtoolkit.PartImage, mimeType: "image/jpeg"},
		{path: "anim.gif", text: "7x5 pixels", kind: llmtoolkit.PartImage, mimeType: "image/gif"},
		{path: "pic.webp", text: "10x6 pixels", kind: llmtoolkit.PartImage, mimeType: "image/webp"},
		{path: "report.pdf", text: "report.pdf: application/pdf", kind: llmtoolkit.PartFile, mimeType: "application/pdf"},
		{path: "bomb.pdf", text: "bomb.pdf: application/pdf, 1.7MB", kind: llmtoolkit.PartFile, mimeType: "application/pdf", maxAlloc: 3 << 20},
		{path: "logo.svg", text: "<svg"},
		{path: "text.png", text: "not an image at all"},
		{path: "image.txt", text: "64x48 pixels", kind: llmtoolkit.PartImage, mimeType: "image/png"},
		{path: "cut.png", wantErr: ErrMalformedMedia, errText: "cut short"},
		{path: "huge-header.png", wantErr: ErrMediaTooLarge, errText: "100000x100000", maxAlloc: 256 << 10},
		{path: "big.png", wantErr: ErrMediaTooLarge, errText: "over the 5.0MB cap", maxAlloc: 256 << 10},
		{path: "link.png", errText: "outside"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			var res llmtoolkit.Result
			n := allocated(func() {
				res = llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{ID: "1", Name: "read_file", Arguments: map[string]any{"path": tc.path}})
			})
			t.Logf("%s: error=%v parts=%d allocated=%d: %.160s", tc.path, res.IsError, len(res.Parts), n, res.Content)
			if tc.maxAlloc > 0 {
				assert.LessOrEqual(t, n, tc.maxAlloc, "bytes allocated")
			}
			if tc.errText != "" {
				require.True(t, res.IsError, res.Content)
				assert.Contains(t, res.Content, tc.errText)
				if tc.wantErr != nil {
					assert.True(t, errors.Is(res.Err, tc.wantErr), "%v", res.Err)
				}
				assert.Empty(t, res.Parts)
				return
			}
			require.False(t, res.IsError, res.Content)
			assert.Contains(t, res.Content, tc.text)
			if tc.kind == "" {
				assert.Empty(t, res.Parts)
				return
			}
			require.Len(t, res.Parts, 1)
			p := res.Parts[0]
			assert.Equal(t, tc.kind, p.Kind)
			assert.Equal(t, tc.mimeType, p.MediaType)
			assert.Equal(t, files[tc.path], p.Data)
			if tc.kind == llmtoolkit.PartFile {
				assert.Equal(t, tc.path, p.Name)
			}
			assert.False(t, strings.Contains(res.Content, "\x00"))
		})
	}

	t.Run("a raised cap lets the 6 MiB image through", func(t *testing.T) {
		c2, err := New(root, WithMediaLimits(8<<20, 0))
		require.NoError(t, err)
		defer c2.Close()
		res := llmtoolkit.Execute(context.Background(), c2, llmtoolkit.Call{ID: "1", Name: "read_file", Arguments: map[string]any{"path": "big.png"}})
		require.False(t, res.IsError, res.Content)
		require.Len(t, res.Parts, 1)
		assert.Len(t, res.Parts[0].Data, len(files["big.png"]))
	})
}

// http_get answers an image as read_file does, whatever the Content-Type
// claims, and refuses one over the cap before reading its body.
func TestHTTPGetMedia(t *testing.T) {
	pngBytes := testPNG(t, 32, 16, 0)
	big := testPNG(t, 8, 8, 6<<20)
	var sentBig atomic64
	srv := httptestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/chart.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(pngBytes)
		case "/lying.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(pngBytes)
		case "/big.png":
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			n, _ := w.Write(big)
			sentBig.add(n)
		case "/chunked.png":
			w.Header().Set("Content-Type", "image/png")
			for i := 0; i < len(big); i += 1 << 20 {
				_, _ = w.Write(big[i:min(i+1<<20, len(big))])
				w.(http.Flusher).Flush()
			}
		case "/huge-header.png":
			_, _ = w.Write(hugeHeaderPNG(1 << 10))
		}
	})
	c := newTools(t, WithAllowPrivateNetworks())
	get := func(p string) llmtoolkit.Result {
		return llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{ID: "1", Name: "http_get", Arguments: map[string]any{"url": srv + p}})
	}
	for _, p := range []string{"/chart.png", "/lying.txt"} {
		res := get(p)
		require.False(t, res.IsError, res.Content)
		assert.Contains(t, res.Content, "32x16 pixels (the image is attached)")
		require.Len(t, res.Parts, 1)
		assert.Equal(t, pngBytes, res.Parts[0].Data)
		assert.Equal(t, "image/png", res.Parts[0].MediaType)
	}
	for _, p := range []string{"/big.png", "/chunked.png", "/huge-header.png"} {
		res := get(p)
		require.True(t, res.IsError, p)
		assert.True(t, errors.Is(res.Err, ErrMediaTooLarge), "%s: %v", p, res.Err)
		assert.Empty(t, res.Parts)
		t.Logf("%s: %s", p, res.Content)
	}
}

type atomic64 struct{ n atomic.Int64 }

func (a *atomic64) add(n int) { a.n.Add(int64(n)) }

func httptestServer(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
