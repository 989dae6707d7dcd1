package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/llmtoolkit/llmtoolkit/trace"
)

const tracesUsage = `Usage: llmtoolkit traces [--db FILE] [--table NAME] [--tenant ID] [--conversation ID] [--call ID] [--limit N]

Prints the most recent tool calls recorded in the SQLite database FILE
(by 'llmtoolkit mcp --trace-db FILE'), newest first, as a table: time,
tool, result type, duration in ms, iteration, tenant, conversation, the
model's call id and arguments. --tenant keeps one tenant's calls (on a
server with --auth, the tenant each token names).
--table reads the table NAME (as given to 'llmtoolkit mcp --trace-table')
instead of tool_traces.
`

// maxArgsWidth is how many characters of the arguments the table shows.
const maxArgsWidth = 60

func runTraces(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("traces")
	dbPath := fs.String("db", defaultDB, "SQLite trace database")
	table := fs.String("table", trace.DefaultTable, "the traces table: a name, or schema.name")
	tenant := fs.String("tenant", "", "show only this tenant's calls (a UUID)")
	conversation := fs.String("conversation", "", "show only this conversation's calls")
	callID := fs.String("call", "", "show only the call with this id (the model's tool call id)")
	limit := fs.Int("limit", 50, "show at most this many calls (0: all)")
	pos, code, ok := parseArgs(fs, tracesUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, fs.Name(), fmt.Sprintf("unexpected argument %q", pos[0]))
	}
	if *limit < 0 {
		return usageError(stderr, fs.Name(), fmt.Sprintf("--limit %d is negative", *limit))
	}
	if *tenant != "" {
		if _, err := uuid.Parse(*tenant); err != nil {
			return usageError(stderr, fs.Name(), fmt.Sprintf("--tenant %q is not a UUID", *tenant))
		}
	}
	if err := trace.ValidateTable(*table); err != nil {
		return usageError(stderr, fs.Name(), fmt.Sprintf("--table: %v", err))
	}
	// OpenSQLite would create a missing file: say it is missing instead.
	if _, err := os.Stat(*dbPath); err != nil {
		fmt.Fprintf(stderr, "llmtoolkit traces: no trace database at %s; pass --db FILE as given to 'llmtoolkit mcp --trace-db'\n", *dbPath)
		return exitError
	}
	db, err := trace.OpenSQLite(*dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "llmtoolkit traces: opening %s: %v\n", *dbPath, err)
		return exitError
	}
	if sqlDB, err := db.DB(); err == nil {
		defer sqlDB.Close()
	}
	traces, err := trace.List(ctx, db, trace.Filter{TenantID: *tenant, ConversationID: *conversation, CallID: *callID, Limit: *limit}, trace.WithTable(*table))
	if err != nil {
		fmt.Fprintf(stderr, "llmtoolkit traces: listing %s: %v\n", *dbPath, err)
		return exitError
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTOOL\tRESULT\tMS\tITER\tTENANT\tCONVERSATION\tCALL\tCOST\tARGUMENTS")
	for _, t := range traces {
		call := ""
		if t.CallID != nil {
			call = *t.CallID
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n",
			t.InsertedAt.Local().Format(time.DateTime), t.ToolName, t.ResultType,
			t.DurationMS, t.Iteration, orDash(t.TenantID), orDash(t.ConversationID), orDash(call), costText(t), shortArgs(t.Arguments))
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "llmtoolkit traces: %v\n", err)
		return exitError
	}
	return exitOK
}

// costText shows what a call's own model calls cost (a sub-agent's run):
// "$0.012345", "$0.01 +2 unpriced" when some had no price, "-" for a call
// that reported none.
func costText(t trace.Trace) string {
	if t.CostUSD == nil {
		return "-"
	}
	s := fmt.Sprintf("$%.6f", *t.CostUSD)
	if t.UnpricedCalls != nil && *t.UnpricedCalls > 0 {
		s += fmt.Sprintf(" +%d unpriced", *t.UnpricedCalls)
	}
	return s
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortArgs renders args as one line of JSON of at most maxArgsWidth runes.
func shortArgs(args trace.JSON) string {
	// An encoder that leaves &, < and > as they are: this is a terminal, not
	// an HTML page.
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return "?"
	}
	s := strings.Join(strings.Fields(buf.String()), " ")
	if r := []rune(s); len(r) > maxArgsWidth {
		return string(r[:maxArgsWidth-1]) + "…"
	}
	return s
}
