package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmtoolkit/llmtoolkit/checkpoint"
)

// defaultCheckpointDB is the checkpoint database used when --db is not given.
const defaultCheckpointDB = "llmtoolkit-checkpoints.db"

const checkpointsUsage = `Usage: llmtoolkit checkpoints [--db FILE] [--root DIR] [--conversation ID] [--limit N]
       llmtoolkit checkpoints save    [--db FILE] [--root DIR]
       llmtoolkit checkpoints diff    [--db FILE] [--root DIR] [--json] FROM TO
       llmtoolkit checkpoints rewind  [--db FILE] [--root DIR] [--dry-run] [--json] [--deny GLOB]... ID
       llmtoolkit checkpoints collect [--db FILE]

Lists the checkpoints of the folder DIR (default: the working folder)
recorded in the SQLite database FILE (by 'llmtoolkit mcp --checkpoint-db
FILE', or by a program using package checkpoint), newest first. save
records the folder now; diff lists what changed between two checkpoints;
rewind puts the folder back as checkpoint ID recorded it (--dry-run: list
the changes only; --deny GLOB: refuse the rewind if it would write a path
that GLOB matches, as path.Match reads it, a trailing /** matching a whole
folder) and prints the id of the checkpoint that undoes it; collect
removes the blobs no checkpoint names.
`

func runCheckpoints(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	fs := newFlagSet("checkpoints " + sub)
	dbPath := fs.String("db", defaultCheckpointDB, "SQLite checkpoint database")
	root := fs.String("root", defaultRoot(), "the folder checkpointed")
	conversation := fs.String("conversation", "", "list only this conversation's checkpoints")
	limit := fs.Int("limit", 50, "list at most this many (1 to 1000)")
	dry := fs.Bool("dry-run", false, "rewind: list the changes, write nothing")
	asJSON := fs.Bool("json", false, "diff, rewind: print JSON")
	var deny multiFlag
	fs.Var(&deny, "deny", "rewind: refuse to write paths matching this glob (repeatable)")
	pos, code, ok := parseArgs(fs, checkpointsUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	want := map[string]int{"list": 0, "save": 0, "collect": 0, "diff": 2, "rewind": 1}
	n, known := want[sub]
	if !known {
		return usageError(stderr, "llmtoolkit checkpoints", fmt.Sprintf("unknown subcommand %q", sub))
	}
	if len(pos) != n {
		return usageError(stderr, fs.Name(), fmt.Sprintf("%d arguments, want %d", len(pos), n))
	}
	if sub != "save" {
		if _, err := os.Stat(*dbPath); err != nil {
			fmt.Fprintf(stderr, "llmtoolkit checkpoints: no checkpoint database at %s; pass --db FILE\n", *dbPath)
			return exitError
		}
	}
	db, err := checkpoint.OpenSQLite(*dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "llmtoolkit checkpoints: %v\n", err)
		return exitError
	}
	defer func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	}()
	store, err := checkpoint.NewStore(db)
	if err != nil {
		fmt.Fprintf(stderr, "llmtoolkit checkpoints: %v\n", err)
		return exitError
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "llmtoolkit checkpoints %s: %v\n", sub, err)
		return exitError
	}
	if sub == "collect" {
		got, err := store.Collect(ctx)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "removed %d blobs (%d bytes)\n", got.Blobs, got.Bytes)
		return exitOK
	}
	c, err := checkpoint.New(store, *root, checkpoint.WithAllow(deny.allow))
	if err != nil {
		return fail(err)
	}
	switch sub {
	case "save":
		cp, err := c.Save(ctx, checkpoint.KindManual, "")
		if err != nil {
			return fail(err)
		}
		fmt.Fprintln(stdout, cp.ID)
	case "list":
		list, err := c.List(ctx, checkpoint.Filter{ConversationID: *conversation, Limit: *limit})
		if err != nil {
			return fail(err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tID\tKIND\tITER\tCONVERSATION\tCALL\tENTRIES")
		for _, cp := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%d\n", cp.CreatedAt.Local().Format(time.DateTime), cp.ID, cp.Kind,
				cp.Iteration, orDash(cp.ConversationID), orDash(cp.CallID), cp.Entries)
		}
		if err := tw.Flush(); err != nil {
			return fail(err)
		}
	case "diff":
		changes, truncated, err := c.Diff(ctx, pos[0], pos[1])
		if err != nil {
			return fail(err)
		}
		if *asJSON {
			return printJSON(stdout, stderr, checkpoint.DiffPayload{From: pos[0], To: pos[1], Changes: nonNil(changes), Truncated: truncated, Skipped: []checkpoint.Skipped{}})
		}
		printChanges(stdout, changes)
		if truncated {
			fmt.Fprintf(stdout, "(the list stops at %d changes)\n", checkpoint.MaxDiffChanges)
		}
	case "rewind":
		r, err := c.Rewind(ctx, pos[0], checkpoint.RewindOptions{DryRun: *dry})
		if err != nil {
			return fail(err)
		}
		if *asJSON {
			return printJSON(stdout, stderr, r)
		}
		printChanges(stdout, r.Changes)
		for _, s := range r.Skipped {
			fmt.Fprintf(stdout, "not restored: %s (%s)\n", quoteName(s.Path), s.Reason)
		}
		switch {
		case *dry:
			fmt.Fprintf(stdout, "dry run: %d changes, nothing written\n", len(r.Changes))
		default:
			fmt.Fprintf(stdout, "rewound to %s (%d changes); undo with: llmtoolkit checkpoints rewind %s\n", r.To.ID, len(r.Changes), r.Before.ID)
		}
	}
	return exitOK
}

func nonNil(c []checkpoint.Change) []checkpoint.Change {
	if c == nil {
		return []checkpoint.Change{}
	}
	return c
}

func printJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "llmtoolkit checkpoints: %v\n", err)
		return exitError
	}
	return exitOK
}

// quoteName quotes a path that holds a newline or another control
// character, so that a name cannot forge a line of the listing.
func quoteName(p string) string {
	if strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '"' }) {
		return fmt.Sprintf("%q", p)
	}
	return p
}

func printChanges(w io.Writer, changes []checkpoint.Change) {
	for _, ch := range changes {
		mode := ""
		if ch.Op == "mode" {
			mode = " " + ch.OldMode + " -> " + ch.NewMode
		}
		fmt.Fprintf(w, "%-8s %s (%s)%s\n", ch.Op, quoteName(ch.Path), ch.Kind, mode)
	}
}

// multiFlag is a repeatable --deny.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// allow refuses a path one of the globs matches.
func (m multiFlag) allow(_ context.Context, p string) error {
	for _, g := range m {
		if dir, ok := strings.CutSuffix(g, "/**"); ok && (p == dir || strings.HasPrefix(p, dir+"/")) {
			return fmt.Errorf("denied by --deny %s", g)
		}
		if ok, _ := path.Match(g, p); ok {
			return fmt.Errorf("denied by --deny %s", g)
		}
	}
	return nil
}
