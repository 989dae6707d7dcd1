//lint:file-ignore SA1019 the conformance scenarios exercise sampling and roots, deprecated by the 2026-07-28 protocol but still served

// Command server is the server of tools the MCP conformance suite
// (@modelcontextprotocol/conformance) tests: the tools its server
// scenarios call, served by [mcp.Handler] as a user of this module would
// serve their own. scripts/conformance.sh builds and runs it.
//
// Usage:
//
//	server -addr 127.0.0.1:3001
//
// It serves MCP on /mcp and prints "listening on http://ADDR/mcp" once
// ready.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/llmtoolkit/llmtoolkit/skills"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// skillFiles are the skills served as MCP's skills extension (SEP-2640)
// for the suite's sep-2640-skills-* scenarios.
//
//go:embed skills
var skillFiles embed.FS

// servedSkills loads the embedded skills, refusing to start on a bad one.
func servedSkills() (*skills.Set, error) {
	sub, err := fs.Sub(skillFiles, "skills")
	if err != nil {
		return nil, err
	}
	set, err := skills.NewLoader([]skills.Source{skills.FS("conformance", sub)}).Load(context.Background())
	if err != nil {
		return nil, err
	}
	if p := set.Problems(); len(p) > 0 {
		return nil, errors.Join(p...)
	}
	return set, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "the address to listen on")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := run(*addr, log); err != nil {
		log.Error("conformance server", slog.Any("error", err))
		os.Exit(1)
	}
}

func run(addr string, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	set, err := servedSkills()
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.Handler(tools(), mcp.WithName("llmtoolkit-conformance"), mcp.WithLogger(log),
		mcp.WithTaskTools(taskTools), mcp.WithSkills(set)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// tools are the tools the suite's server scenarios call, by the names
// they call them.
//
// The scenarios of image, audio, embedded-resource and mixed content
// (test_image_content, test_audio_content, test_embedded_resource,
// test_multiple_content_types) wait on rich tool content (issue 38): add
// them here once a tool can answer with those parts.
func tools() *llmtoolkittest.Fake {
	empty := map[string]any{"type": "object", "properties": map[string]any{}}
	f := &llmtoolkittest.Fake{}
	f.Add(llmtoolkit.MustTool("test_simple_text", "Tests simple text content response", empty),
		func(context.Context, llmtoolkit.Call) (string, error) {
			return "This is a simple text response for testing.", nil
		})
	f.Add(llmtoolkit.MustTool("test_error_handling", "Tests error response handling", empty),
		func(context.Context, llmtoolkit.Call) (string, error) {
			return "", errors.New("this tool intentionally returns an error for testing")
		})
	f.Add(llmtoolkit.MustTool("test_tool_with_progress", "Tests tool that reports progress notifications", empty),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			for _, p := range []float64{0, 50, 100} {
				llmtoolkit.ReportProgress(ctx, llmtoolkit.Progress{Progress: p, Total: 100,
					Message: fmt.Sprintf("Completed step %.0f of 100", p)})
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(50 * time.Millisecond):
				}
			}
			return "progress reported", nil
		})
	f.Add(llmtoolkit.MustTool("json_schema_2020_12_tool",
		"Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)", schema202012),
		func(_ context.Context, c llmtoolkit.Call) (string, error) {
			return fmt.Sprintf("received %d arguments", len(c.Arguments)), nil
		})
	f.Add(llmtoolkit.MustTool("test_streaming_elicitation", "Answers on its call's stream with its result only, no request of its own (SEP-2575)", empty),
		func(context.Context, llmtoolkit.Call) (string, error) {
			return "stream observed: result frames only, no top-level requests", nil
		})
	f.Add(llmtoolkit.MustTool("test_logging_tool", "Sends no log message the client did not ask for (SEP-2575)", empty),
		func(context.Context, llmtoolkit.Call) (string, error) { return "no log sent", nil })
	f.Add(llmtoolkit.MustTool("test_missing_capability", "Requires the sampling client capability (SEP-2575)", empty),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			if caps := mcp.ClientCapabilitiesFrom(ctx); caps != nil && caps.Sampling != nil {
				return "Client declared the sampling capability; tool executed.", nil
			}
			return "", mcp.MissingClientCapability(&sdk.ClientCapabilities{Sampling: &sdk.SamplingCapabilities{}})
		})
	f.Add(llmtoolkit.MustTool("test_x_mcp_header", "Tests SEP-2243 Mcp-Param-* server-side validation", map[string]any{
		"type": "object",
		"properties": map[string]any{
			"region": map[string]any{"type": "string", "description": "mirrored into Mcp-Param-Region", "x-mcp-header": "Region"},
			"level":  map[string]any{"type": "integer", "description": "non-mirrored argument"},
		},
	}), func(_ context.Context, c llmtoolkit.Call) (string, error) {
		return fmt.Sprintf("region=%v", c.Arguments["region"]), nil
	})
	addInputRequiredTools(f, empty)
	addTaskTools(f)
	addContentTools(f, empty)
	addSessionTools(f, empty)
	return f
}

// schema202012 is the input schema the json-schema-2020-12 scenario
// expects to find in tools/list as it was written.
var schema202012 = map[string]any{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type":    "object",
	"$defs": map[string]any{
		"address": map[string]any{
			"$anchor": "addressDef",
			"type":    "object",
			"properties": map[string]any{
				"street": map[string]any{"type": "string"},
				"city":   map[string]any{"type": "string"},
			},
		},
	},
	"properties": map[string]any{
		"name":          map[string]any{"type": "string"},
		"address":       map[string]any{"$ref": "#/$defs/address"},
		"contactMethod": map[string]any{"type": "string", "enum": []any{"phone", "email"}},
		"phone":         map[string]any{"type": "string"},
		"email":         map[string]any{"type": "string"},
	},
	"allOf": []any{
		map[string]any{"anyOf": []any{
			map[string]any{"required": []any{"phone"}},
			map[string]any{"required": []any{"email"}},
		}},
	},
	"if": map[string]any{
		"properties": map[string]any{"contactMethod": map[string]any{"const": "phone"}},
		"required":   []any{"contactMethod"},
	},
	"then":                 map[string]any{"required": []any{"phone"}},
	"else":                 map[string]any{"required": []any{"email"}},
	"additionalProperties": false,
}
