package otelkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// secretMark is in every planted secret: no output may hold it.
const secretMark = "hunter2-XYZ"

var (
	propTenant = "0b6d3c1e-3f4a-4c2b-9f1e-1a2b3c4d5e6f"
	propConv   = "5f0c2a9e-8d7b-4e6f-a1b2-c3d4e5f60718"
)

// secretTools are tools that declare "password" sensitive and quote it
// back in their errors: a failure, a halt, and a recipe whose step is the
// failing one.
func secretTools() llmtoolkit.Resolver {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"user": map[string]any{"type": "string"}, "password": map[string]any{"type": "string"}}}
	f := &llmtoolkittest.Fake{}
	f.Handle("login", func(_ context.Context, c llmtoolkit.Call) (string, error) {
		return "", fmt.Errorf("login failed: password %v was rejected", c.Arguments["password"])
	})
	f.Handle("unlock", func(_ context.Context, c llmtoolkit.Call) (string, error) {
		return "", llmtoolkit.Halt(fmt.Sprintf("stop: the password %v is compromised", c.Arguments["password"]))
	})
	var tools []llmtoolkit.Tool
	for _, name := range []string{"login", "unlock"} {
		t := llmtoolkit.MustTool(name, "Uses a password.", schema)
		t.SensitiveFields = []string{"password"}
		tools = append(tools, t)
	}
	setup := llmtoolkit.MustTool("setup", "Logs in as a recipe.", schema)
	setup.SensitiveFields = []string{"password"}
	setup.Recipe = func(args map[string]any) llmtoolkit.Plan {
		return llmtoolkit.Plan{Serial: []llmtoolkit.Call{{Name: "login", Arguments: map[string]any{"password": args["password"]}}}}
	}
	tools = append(tools, setup)
	return withTools{f, tools}
}

type withTools struct {
	*llmtoolkittest.Fake
	tools []llmtoolkit.Tool
}

func (w withTools) Tools() []llmtoolkit.Tool { return w.tools }

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// propDBs opens SQLite and, when LLMTOOLKIT_TEST_POSTGRES_DSN is set,
// PostgreSQL (a schema of its own), both migrated.
func propDBs(t *testing.T) map[string]*gorm.DB {
	dbs := map[string]*gorm.DB{}
	sqlite, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(sqlite))
	dbs["sqlite"] = sqlite
	dsn := os.Getenv("LLMTOOLKIT_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Log("LLMTOOLKIT_TEST_POSTGRES_DSN is not set: trace rows are checked on SQLite only")
		return dbs
	}
	cfg := &gorm.Config{Logger: logger.Discard}
	admin, err := gorm.Open(postgres.Open(dsn), cfg)
	require.NoError(t, err)
	schema := "leak_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	require.NoError(t, admin.Exec("CREATE SCHEMA "+schema).Error)
	pg, err := gorm.Open(postgres.Open(dsn+" search_path="+schema), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
	})
	require.NoError(t, trace.Migrate(pg))
	dbs["postgres"] = pg
	return dbs
}

// TestDeclaredSecretsNeverLeave plants a declared secret in every kind of
// call — well-formed (failing, halting), malformed (cut off), a recipe's
// step, over MCP with the wrappers on the client side and on the server
// side — and checks every output channel: the trace rows on SQLite and
// PostgreSQL, the spans' attributes and events, the spans' statuses, the
// metrics' attributes, every slog record (the default logger, agentloop's,
// trace's and mcp's) and the error texts the host gets (Run's error, trace's
// WithOnError). Size: 6 kinds of call × 7 channels (6 without PostgreSQL).
func TestDeclaredSecretsNeverLeave(t *testing.T) {
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	prev := slog.Default()
	slog.SetDefault(logger)
	t.Cleanup(func() { slog.SetDefault(prev) })

	tel := newTelemetry(t)
	dbs := propDBs(t)
	var errTexts []string
	var errMu sync.Mutex
	onError := trace.WithOnError(func(_ *trace.Trace, err error) {
		errMu.Lock()
		defer errMu.Unlock()
		errTexts = append(errTexts, err.Error())
	})
	// wrap audits a resolver on every database and traces it.
	wrap := func(r llmtoolkit.Resolver) llmtoolkit.Resolver {
		for _, db := range dbs {
			r = trace.Record(r, db, trace.WithDefaultConversation(propTenant, propConv), trace.WithLogger(logger), onError)
		}
		return otelkit.Instrument(r, tel.opts(otelkit.WithCaptureContent())...)
	}
	// serve serves r over MCP in memory and connects a Client to it.
	serve := func(r llmtoolkit.Resolver) *mcp.Client {
		st, ct := sdk.NewInMemoryTransports()
		ss, err := mcp.NewServer(r, mcp.WithLogger(logger)).Connect(testContext(t), st, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = ss.Close() })
		c, err := mcp.Connect(testContext(t), ct, mcp.WithLogger(logger))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	local := wrap(secretTools())
	clientSide := wrap(serve(secretTools()))
	serverSide := serve(wrap(secretTools()))

	call := func(name, secret string) llmtoolkit.Call {
		return llmtoolkit.Call{ID: "c-" + name, Name: name, Arguments: map[string]any{"user": "bob", "password": secret}}
	}
	kinds := []struct {
		name string
		r    llmtoolkit.Resolver
		call llmtoolkit.Call
	}{
		{"well-formed", local, call("login", secretMark+"-plain")},
		{"halting", local, call("unlock", secretMark+"-halt")},
		{"malformed", local, llmtoolkit.MalformedCall("c-m", "login", `{"user": "bob", "password": "`+secretMark+`-cut`, errors.New("unexpected end of JSON input"))},
		{"recipe step", local, call("setup", secretMark+"-recipe")},
		{"mcp client side", clientSide, call("login", secretMark+"-mcp-client")},
		{"mcp server side", serverSide, call("login", secretMark+"-mcp-server")},
	}
	for _, k := range kinds {
		model := llmtoolkittest.NewScriptedModel(t,
			llmtoolkittest.CallTools(k.call), llmtoolkittest.CallTools(k.call), llmtoolkittest.CallTools(k.call),
			llmtoolkittest.Reply("done"))
		_, _, err := agentloop.Run(testContext(t), []agentloop.Message{agentloop.UserMessage("go")}, model.Send, agentloop.Options{
			Resolver: k.r, BreakerThreshold: 2, Logger: logger,
			Tracer: otelkit.Agent("prop", tel.opts(otelkit.WithCaptureContent())...),
		})
		require.Error(t, err, k.name)
		errMu.Lock()
		errTexts = append(errTexts, err.Error())
		errMu.Unlock()
	}

	// The channels.
	channels := map[string]string{}
	for name, db := range dbs {
		rows, err := trace.List(testContext(t), db, trace.Filter{})
		require.NoError(t, err)
		require.NotEmpty(t, rows)
		data, err := json.Marshal(rows)
		require.NoError(t, err)
		channels["rows "+name] = string(data)
	}
	var attrs, statuses strings.Builder
	for _, sp := range tel.spans() {
		fmt.Fprintf(&attrs, "%s %v %v\n", sp.Name, sp.Attributes, sp.Events)
		fmt.Fprintf(&statuses, "%s %s\n", sp.Name, sp.Status.Description)
	}
	channels["span attributes"] = attrs.String()
	channels["span status"] = statuses.String()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(testContext(t), &rm))
	var metricAttrs strings.Builder
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
				for _, dp := range h.DataPoints {
					fmt.Fprintf(&metricAttrs, "%s %v\n", m.Name, dp.Attributes.ToSlice())
				}
			}
			if h, ok := m.Data.(metricdata.Histogram[int64]); ok {
				for _, dp := range h.DataPoints {
					fmt.Fprintf(&metricAttrs, "%s %v\n", m.Name, dp.Attributes.ToSlice())
				}
			}
		}
	}
	channels["metric attributes"] = metricAttrs.String()
	channels["logs"] = logs.String()
	errMu.Lock()
	channels["error texts"] = strings.Join(errTexts, "\n")
	errMu.Unlock()

	for name, text := range channels {
		assert.NotEmpty(t, text, "%s: nothing was written, the check would prove nothing", name)
		assert.NotContains(t, text, secretMark, "%s holds a declared secret", name)
	}
	// Each kind of call reached the channels: a row per kind and a span.
	for _, k := range kinds[:4] {
		assert.Contains(t, channels["span status"], "execute_tool "+k.call.Name, k.name)
	}
	t.Logf("%d kinds of call × %d channels", len(kinds), len(channels))
}
