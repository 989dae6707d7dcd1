package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// addContentTools adds the tools of the rich content scenarios: each
// returns its text and attaches parts (llmtoolkit.Attach), which mcp
// sends as image, audio and embedded-resource content after the text.
func addContentTools(f *llmtoolkittest.Fake, empty map[string]any) {
	img := redPixelPNG()
	add := func(name, desc, text string, parts ...llmtoolkit.Part) {
		f.Add(llmtoolkit.MustTool(name, desc, empty), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			llmtoolkit.Attach(ctx, parts...)
			return text, nil
		})
	}
	add("test_image_content", "Returns an image (a 1x1 red PNG)", "A 1x1 red pixel:",
		llmtoolkit.ImagePart("image/png", img))
	add("test_audio_content", "Returns audio (a short silent WAV)", "A short silent sound:",
		llmtoolkit.FilePart("silence.wav", "audio/wav", silentWAV()))
	add("test_embedded_resource", "Returns an embedded resource", "An embedded resource:",
		llmtoolkit.FilePart("embedded.txt", "text/plain", []byte("This is an embedded resource content.")))
	add("test_multiple_content_types", "Returns text, an image and an embedded resource", "Multiple content types test:",
		llmtoolkit.ImagePart("image/png", img),
		llmtoolkit.FilePart("data.json", "application/json", []byte(`{"test":"data","value":123}`)))
}

// redPixelPNG is a 1x1 red PNG.
func redPixelPNG() []byte {
	m := image.NewRGBA(image.Rect(0, 0, 1, 1))
	m.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	_ = png.Encode(&b, m) // into memory: never fails
	return b.Bytes()
}

// silentWAV is 10 ms of silence: PCM, mono, 8 kHz, 16 bits.
func silentWAV() []byte {
	const rate, samples = 8000, 80
	data := make([]byte, samples*2)
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) } // into memory: never fails
	b.WriteString("RIFF")
	w(uint32(36 + len(data)))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1)) // PCM
	w(uint16(1)) // mono
	w(uint32(rate))
	w(uint32(rate * 2)) // bytes per second
	w(uint16(2))        // block align
	w(uint16(16))       // bits per sample
	b.WriteString("data")
	w(uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}
