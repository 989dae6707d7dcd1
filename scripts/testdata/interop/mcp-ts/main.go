// Command mcp-ts is the Go side of the interop check of llmtoolkit's MCP
// server and client with the official TypeScript SDK
// (@modelcontextprotocol/sdk). scripts/interop.sh builds it in a scratch
// module that requires the core, and runs:
//
//	mcp-ts digest              prints the SHA-256 and the size of the PNG "snapshot" answers with
//	mcp-ts serve               serves, with mcp.Serve over stdio, a tool "snapshot" that answers
//	                           with a text and that PNG (client.mjs, the TypeScript SDK's client,
//	                           calls it and checks the image's bytes and media type)
//	mcp-ts connect CMD ARGS... connects with mcp.Connect to the server CMD runs (server.mjs, the
//	                           TypeScript SDK's server) and checks that its image, audio and PDF
//	                           arrive as parts, byte for byte
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
	"github.com/llmtoolkit/llmtoolkit/mcp"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-ts interop:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: mcp-ts digest | serve | connect CMD [ARGS...]")
	}
	switch args[0] {
	case "digest":
		img, err := snapshot()
		if err != nil {
			return err
		}
		fmt.Printf("%x %d\n", sha256.Sum256(img), len(img))
		return nil
	case "serve":
		return serve()
	case "connect":
		if len(args) < 2 {
			return errors.New("connect: the server's command is missing")
		}
		return connect(args[1], args[2:])
	}
	return fmt.Errorf("unknown mode %q", args[0])
}

// snapshot is a 256×256 PNG of noise (about 260 KB, more than the
// transports' buffers), the same bytes on every run.
func snapshot() ([]byte, error) {
	img := image.NewNRGBA(image.Rect(0, 0, 256, 256))
	x := uint32(38)
	for i := range img.Pix {
		x = x*1664525 + 1013904223
		img.Pix[i] = byte(x >> 24)
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	img.Set(0, 0, color.NRGBA{255, 0, 0, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type noArgs struct{}

// serve serves the "snapshot" tool over stdio until the client ends the
// session.
func serve() error {
	img, err := snapshot()
	if err != nil {
		return err
	}
	tools, err := agentresolver.New(agentresolver.Func("snapshot", "Takes a snapshot: a PNG image.",
		func(ctx context.Context, _ noArgs) (string, error) {
			llmtoolkit.Attach(ctx, llmtoolkit.ImagePart("image/png", img))
			return "snapshot.png: image/png, 256x256", nil
		}))
	if err != nil {
		return err
	}
	return mcp.Serve(context.Background(), tools, mcp.StdioTransport(), mcp.WithName("llmtoolkit-interop"))
}

// tsBytes are the bytes server.mjs sends for a media type's part: a
// prefix, then n bytes of the generator both sides share.
func tsBytes(prefix string, n int) []byte {
	b := append([]byte(prefix), make([]byte, n)...)
	x := uint32(38)
	for i := len(prefix); i < len(b); i++ {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// connect calls the TypeScript server's "snapshot" tool through
// mcp.Connect and checks its parts.
func connect(name string, args []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	c, err := mcp.Connect(ctx, mcp.CommandTransport(cmd))
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{ID: "1", Name: "snapshot", Arguments: map[string]any{}})
	if res.IsError {
		return fmt.Errorf("snapshot failed: %s", res.Content)
	}
	if res.Content != "a snapshot from TypeScript" {
		return fmt.Errorf("text: got %q", res.Content)
	}
	want := []llmtoolkit.Part{
		llmtoolkit.ImagePart("image/png", tsBytes("\x89PNG\r\n\x1a\n", 300000)),
		llmtoolkit.FilePart("", "audio/wav", tsBytes("RIFF", 40000)),
		llmtoolkit.FilePart("report.pdf", "application/pdf", tsBytes("%PDF-1.7\n", 50000)),
	}
	if len(res.Parts) != len(want) {
		return fmt.Errorf("got %d parts, want %d: %v", len(res.Parts), len(want), res.Parts)
	}
	for i, w := range want {
		g := res.Parts[i]
		if g.Kind != w.Kind || g.MediaType != w.MediaType || g.Name != w.Name || !bytes.Equal(g.Data, w.Data) {
			return fmt.Errorf("part %d: got %s (sha256 %x), want %s (sha256 %x)", i+1, g, sha256.Sum256(g.Data), w, sha256.Sum256(w.Data))
		}
	}
	fmt.Printf("mcp.Connect against the TypeScript SDK's server: %s, then %s, %s, %s, byte for byte\n", res.Content, res.Parts[0], res.Parts[1], res.Parts[2])
	return nil
}
