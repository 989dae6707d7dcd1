package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// collector is an OTLP/HTTP trace receiver that keeps what it is sent.
type collector struct {
	*httptest.Server
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string // service.name of each span's resource
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if r.URL.Path != "/v1/traces" || err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			service := ""
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					service = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					c.spans = append(c.spans, s)
					c.services = append(c.services, service)
				}
			}
		}
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(c.Close)
	return c
}

// span returns the received span called name, waiting for it a while.
func (c *collector) span(t *testing.T, name string) (*tracepb.Span, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c.mu.Lock()
		for i, s := range c.spans {
			if s.GetName() == name {
				service := c.services[i]
				c.mu.Unlock()
				return s, service
			}
		}
		got := len(c.spans)
		c.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("the collector received no span %q (%d spans)", name, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.spans)
}

// spanAttrs returns a received span's string attributes.
func spanAttrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, kv := range s.GetAttributes() {
		out[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	return out
}

// withoutOTel is the test's environment without any OTEL_ variable.
func withoutOTel() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}

// runBinEnv runs the binary like runBin, with env as its whole environment.
func runBinEnv(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

func TestCallExportsSpans(t *testing.T) {
	col := newCollector(t)
	dir := projectDir(t)
	env := append(withoutOTel(), "OTEL_EXPORTER_OTLP_ENDPOINT="+col.URL)

	res := runBinEnv(t, env, "", "call", "read_file", `{"path":"a.txt"}`, "--root", dir)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "hello from a")
	assert.Empty(t, res.stderr)
	s, service := col.span(t, "execute_tool read_file")
	assert.Equal(t, "llmtoolkit", service)
	assert.Equal(t, tracepb.Span_SPAN_KIND_INTERNAL, s.GetKind())
	a := spanAttrs(s)
	assert.Equal(t, "execute_tool", a["gen_ai.operation.name"])
	assert.Equal(t, "read_file", a["gen_ai.tool.name"])
	assert.Equal(t, "function", a["gen_ai.tool.type"])
	assert.NotContains(t, a, "gen_ai.tool.call.arguments", "content is not exported")
	assert.Equal(t, tracepb.Status_STATUS_CODE_UNSET, s.GetStatus().GetCode())

	// A path outside the root is a denial; OTEL_SERVICE_NAME names the service.
	res = runBinEnv(t, append(env, "OTEL_SERVICE_NAME=my-agent"), "", "call", "list_directory", `{"path":"../.."}`, "--root", dir)
	require.Equal(t, 1, res.code, res.stdout)
	s, service = col.span(t, "execute_tool list_directory")
	assert.Equal(t, "my-agent", service)
	assert.Equal(t, "denied", spanAttrs(s)["error.type"])
	assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, s.GetStatus().GetCode())
}

func TestTelemetrySilentWithoutEndpoint(t *testing.T) {
	dir := projectDir(t)
	res := runBinEnv(t, withoutOTel(), "", "call", "read_file", `{"path":"a.txt"}`, "--root", dir)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "hello from a")
	assert.Empty(t, res.stderr)

	// An endpoint with the SDK disabled is silent too.
	col := newCollector(t)
	env := append(withoutOTel(), "OTEL_EXPORTER_OTLP_ENDPOINT="+col.URL, "OTEL_SDK_DISABLED=true")
	res = runBinEnv(t, env, "", "call", "read_file", `{"path":"a.txt"}`, "--root", dir)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Empty(t, res.stderr)
	assert.Zero(t, col.count())
}

func TestTelemetryRefusesGRPC(t *testing.T) {
	env := append(withoutOTel(), "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc")
	res := runBinEnv(t, env, "", "call", "read_file", `{"path":"a.txt"}`, "--root", projectDir(t))
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "OTEL_EXPORTER_OTLP_PROTOCOL")
	assert.Contains(t, res.stderr, "http/protobuf")
}

// TestMCPContinuesClientTrace connects an instrumented client to the
// command's MCP server: the span the server exports is a child of the
// client's span.
func TestMCPContinuesClientTrace(t *testing.T) {
	col := newCollector(t)
	dir := projectDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cmd := exec.Command(bin, "mcp", "--root", dir)
	cmd.Env = append(withoutOTel(), "OTEL_EXPORTER_OTLP_ENDPOINT="+col.URL)
	var serverLog lockedBuffer
	cmd.Stderr = &serverLog
	client, err := mcp.Connect(ctx, mcp.CommandTransport(cmd), mcp.WithPropagator(otelkit.NewMetaPropagator(nil)))
	require.NoError(t, err, "server log: %s", serverLog.String())

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	r := otelkit.Instrument(client, otelkit.WithTracerProvider(tp))
	res := llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}})
	require.False(t, res.IsError, res.Content)
	require.NoError(t, client.Close()) // the server exits and flushes its spans

	spans := exp.GetSpans()
	require.Len(t, spans, 1)
	mine := spans[0].SpanContext
	served, _ := col.span(t, "execute_tool read_file")
	assert.Equal(t, mine.TraceID().String(), hex.EncodeToString(served.GetTraceId()), "the served call is in the client's trace")
	assert.Equal(t, mine.SpanID().String(), hex.EncodeToString(served.GetParentSpanId()), "under the client's span")
	assert.NotContains(t, serverLog.String(), "level=ERROR")
}
