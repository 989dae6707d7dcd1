package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/google/uuid"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

const mcpUsage = `Usage: llmtoolkit mcp [--root DIR] [--read-only] [--trace-db FILE]
                      [--trace-table NAME] [--tenant UUID] [--conversation UUID]
                      [--checkpoint-db FILE [--checkpoint-tools]]
                      [--sandbox MODE] [--sandbox-network] [--sandbox-backend NAME]
                      [--http ADDR [--issuer URL] [--resource URL] [--jwks-url URL]
                       [--scopes S] [--write-scope S] [--tenant-claim C]
                       [--conversation-claim C] [--insecure-no-auth]
                       [--allowed-origin O]... [--rate N] [--tool-rate N]]

Serves the code tools confined to DIR over the Model Context Protocol on
stdin/stdout, until the client disconnects or the process is interrupted.
Logs go to stderr; stdout carries only the protocol, one JSON-RPC message
per line: a malformed line is answered with a JSON-RPC error and the
session goes on. A tool's answer is cut to fit in one message (16 MiB for
the Go SDK's clients), with a note saying so. With --trace-db, every
call is recorded in the SQLite database FILE (see 'llmtoolkit traces'),
under the given tenant (default the nil UUID) and conversation (default a
new UUID for each run, printed in the log), in the table NAME (default
tool_traces; created if missing). With --checkpoint-db FILE, the folder
is checkpointed before every call (see 'llmtoolkit checkpoints'); with
--checkpoint-tools too, checkpoint_list and checkpoint_rewind are served
(off by default).

When OTEL_EXPORTER_OTLP_ENDPOINT is set, every call is exported as an
OpenTelemetry span with OTLP over HTTP (configured by the standard OTEL_*
variables), continuing the trace of the client's request when its _meta
carries a traceparent.
` + sandboxUsage + httpUsage

func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("mcp")
	root := fs.String("root", defaultRoot(), "folder the tools are confined to")
	sandboxOpts := sandboxFlags(fs)
	readOnly := fs.Bool("read-only", false, "offer only the tools that change nothing")
	traceDB := fs.String("trace-db", "", "record every call in this SQLite database (e.g. "+defaultDB+")")
	traceTable := fs.String("trace-table", trace.DefaultTable, "the traces table in the --trace-db database: a name, or schema.name")
	checkpointDB := fs.String("checkpoint-db", "", "checkpoint the root before every call in this SQLite database (see 'llmtoolkit checkpoints')")
	checkpointTools := fs.Bool("checkpoint-tools", false, "with --checkpoint-db, also serve checkpoint_list and checkpoint_rewind")
	tenant := fs.String("tenant", uuid.Nil.String(), "tenant UUID written in the traces")
	conversation := fs.String("conversation", "", "conversation UUID written in the traces (default: a new one per run)")
	httpOpts := addHTTPFlags(fs)
	pos, code, ok := parseArgs(fs, mcpUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, fs.Name(), fmt.Sprintf("unexpected argument %q", pos[0]))
	}
	for _, f := range []struct{ name, value string }{{"tenant", *tenant}, {"conversation", *conversation}} {
		if _, err := uuid.Parse(f.value); f.value != "" && err != nil {
			return usageError(stderr, fs.Name(), fmt.Sprintf("--%s %q is not a UUID", f.name, f.value))
		}
	}
	if err := httpOpts.check(); err != nil {
		return usageError(stderr, fs.Name(), err.Error())
	}
	if err := trace.ValidateTable(*traceTable); err != nil {
		return usageError(stderr, fs.Name(), fmt.Sprintf("--trace-table: %v", err))
	}
	if *traceTable != trace.DefaultTable && *traceDB == "" {
		return usageError(stderr, fs.Name(), "--trace-table needs --trace-db FILE")
	}
	if *conversation == "" {
		*conversation = uuid.NewString()
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	opts, err := sandboxOpts()
	if err != nil {
		return usageError(stderr, fs.Name(), err.Error())
	}
	ct, err := codetools.New(*root, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "llmtoolkit mcp: %v; pass an existing folder with --root\n", err)
		return exitError
	}
	defer ct.Close()
	if how := ct.Sandbox(); strings.HasPrefix(how, "none") {
		log.Warn("bash runs unsandboxed", "sandbox", how)
	} else {
		log.Info("bash runs sandboxed", "sandbox", how)
	}
	var r llmtoolkit.Resolver = ct
	if *readOnly {
		r = llmtoolkit.ReadOnly(r)
	}
	if *checkpointTools && *checkpointDB == "" {
		return usageError(stderr, fs.Name(), "--checkpoint-tools needs --checkpoint-db")
	}
	if *checkpointDB != "" {
		db, err := checkpoint.OpenSQLite(*checkpointDB)
		if err != nil {
			fmt.Fprintf(stderr, "llmtoolkit mcp: %v\n", err)
			return exitError
		}
		if sqlDB, err := db.DB(); err == nil {
			defer sqlDB.Close()
		}
		store, err := checkpoint.NewStore(db)
		if err != nil {
			fmt.Fprintf(stderr, "llmtoolkit mcp: %v\n", err)
			return exitError
		}
		c, err := checkpoint.New(store, *root)
		if err != nil {
			fmt.Fprintf(stderr, "llmtoolkit mcp: %v\n", err)
			return exitError
		}
		// An MCP request is no turn of a loop: every call is checkpointed.
		r = checkpoint.Resolver(r, c, checkpoint.WithLogger(log))
		if *checkpointTools && !*readOnly {
			r = llmtoolkit.Compose(r, checkpoint.Tools(c))
		}
	}
	if *traceDB != "" {
		db, err := trace.OpenSQLite(*traceDB)
		if err != nil {
			fmt.Fprintf(stderr, "llmtoolkit mcp: opening the trace database: %v\n", err)
			return exitError
		}
		if sqlDB, err := db.DB(); err == nil {
			defer sqlDB.Close()
		}
		if err := trace.Migrate(db, trace.WithTable(*traceTable)); err != nil {
			fmt.Fprintf(stderr, "llmtoolkit mcp: preparing the trace database %s: %v\n", *traceDB, err)
			return exitError
		}
		// MCP requests carry no conversation: one server run is one
		// conversation, given to every call (refused ones included).
		rec := trace.Record(r, db, trace.WithLogger(log), trace.WithDefaultConversation(*tenant, *conversation), trace.WithTable(*traceTable))
		defer func() {
			if err := rec.Close(); err != nil {
				log.Error("closing the trace recorder", "err", err)
			}
		}()
		r = rec
	}

	tel, err := startTelemetry(ctx, func(err error) { log.Error("OpenTelemetry", "err", err) })
	if err != nil {
		fmt.Fprintf(stderr, "llmtoolkit mcp: %v\n", err)
		return exitError
	}
	defer func() {
		if err := tel.close(); err != nil {
			log.Error("OpenTelemetry", "err", err)
		}
	}()
	r = tel.instrument(r)

	if httpOpts.addr != "" {
		return serveHTTP(ctx, httpOpts, r, append(tel.mcpOptions(), mcp.WithLogger(log), mcp.WithName("llmtoolkit")), log, stderr)
	}
	log.Info("serving MCP on stdio", "root", ct.Root(), "read_only", *readOnly,
		"trace_db", *traceDB, "conversation", *conversation, "otlp", tel.sdk != nil)
	// One line per message; a malformed line is answered with a JSON-RPC
	// error and the session goes on.
	transport := &mcp.LineTransport{Reader: stdin, Writer: stdout, Logger: log}
	err = mcp.Serve(ctx, r, transport, append(tel.mcpOptions(), mcp.WithLogger(log), mcp.WithName("llmtoolkit"))...)
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, io.EOF):
		log.Info("MCP session ended")
		return exitOK
	default:
		log.Error("MCP server stopped", "err", err)
		return exitError
	}
}
