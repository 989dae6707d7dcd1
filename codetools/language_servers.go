package codetools

// The language servers' side of the tools (WithLanguageServers): telling
// a server of each change and reporting the file's diagnostics, in the
// answer and the Display.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/lsp"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// maxDiagnosticMessage bounds one diagnostic's message in answers.
const maxDiagnosticMessage = 500

// setupLanguageServers makes the manager when language servers are on.
func (c *CodeTools) setupLanguageServers() {
	cfg := &c.cfg.lsp
	if cfg.servers == nil {
		return
	}
	cfg.limits = cfg.limits.withDefaults()
	specs := make([]lsp.Spec, 0, len(cfg.servers))
	for _, s := range cfg.servers {
		specs = append(specs, lsp.Spec{Name: s.Name, Command: s.Command, Env: s.Env, Languages: s.Languages,
			RootMarkers: s.RootMarkers, InitializationOptions: s.InitializationOptions, Settings: s.Settings})
	}
	logger := cfg.logger
	if logger == nil {
		logger = slog.Default()
	}
	c.setupServerSandbox(logger)
	c.lsp = lsp.New(c.dir, specs, lsp.Options{
		StartTimeout: cfg.limits.StartTimeout, ShutdownTimeout: cfg.limits.ShutdownTimeout,
		MaxStderr: cfg.limits.MaxStderrBytes, MemoryLimit: cfg.limits.MemoryBytes,
		FirstOpenWait: max(10*time.Second, cfg.limits.Settle), // a longer Settle accepts longer waits
		ReadFile:      c.readForServer, Logger: logger, Launch: c.launchServer,
	})
}

// closeLanguageServers stops the servers.
func (c *CodeTools) closeLanguageServers() error {
	if c.lsp == nil {
		return nil
	}
	return c.lsp.Close()
}

// readForServer reads a file a server names, through the root: a file
// outside it is not read.
func (c *CodeTools) readForServer(abs string) ([]byte, error) {
	rel, ok := c.relOf(abs)
	if !ok {
		return nil, ErrOutsideRoot
	}
	info, err := c.root.Stat(rel)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() || info.Size() > c.cfg.maxEditBytes {
		return nil, errors.New("not a regular file within the edit size")
	}
	return c.root.ReadFile(rel)
}

// relOf returns abs relative to the root, when it is inside it.
func (c *CodeTools) relOf(abs string) (string, bool) {
	rel, err := filepath.Rel(c.dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// afterChange tells the server of rel (root-relative) its new text and
// returns the diagnostics it reports within the settle time, and the
// lines for the answer; nil and "" when servers are off for tool, or no
// server handles the file.
func (c *CodeTools) afterChange(ctx context.Context, tool, rel, text string) (*DiagnosticsPayload, string) {
	if c.lsp == nil {
		return nil, ""
	}
	// Whatever the file's language: a file the servers must not see,
	// made or replaced by this change, restarts them (their views cover it).
	c.checkServerViews()
	c.serversSeeTree(ctx)
	c.serversSeeNew([]string{filepath.ToSlash(rel)})
	if c.cfg.lsp.off[tool] {
		return nil, ""
	}
	abs := filepath.Join(c.dir, rel)
	if !c.lsp.Handles(abs) {
		return nil, ""
	}
	c.serversScope(ctx)
	lim := c.cfg.lsp.limits
	sctx, cancel := context.WithTimeout(ctx, lim.Settle)
	defer cancel()
	rep, err := c.lsp.Diagnose(sctx, abs, text, lim.Quiet)
	if err != nil {
		return nil, "" // no server for it (missing binary: logged once)
	}
	p := c.diagnosticsPayload(rel, rep.Server, rep.Diagnostics, rep.Note)
	return &p, c.formatDiagnostics(p)
}

// diagnosticsPayload keeps the errors and warnings, errors first, at most
// MaxShown of them.
func (c *CodeTools) diagnosticsPayload(rel, server string, diags []lsp.Diagnostic, note string) DiagnosticsPayload {
	p := DiagnosticsPayload{Path: shownPath(rel), Server: server, Items: []Diagnostic{}, Note: note}
	var kept []lsp.Diagnostic
	for _, d := range diags {
		switch d.Severity {
		case lsp.SeverityError, 0:
			p.Errors++
		case lsp.SeverityWarning:
			p.Warnings++
		default:
			continue
		}
		kept = append(kept, d)
	}
	sortDiagnostics(kept)
	for i, d := range kept {
		if i >= c.cfg.lsp.limits.MaxShown {
			p.Truncated = true
			break
		}
		p.Items = append(p.Items, toDiagnostic(p.Path, d))
	}
	return p
}

// sortDiagnostics orders errors before warnings, then by position.
func sortDiagnostics(diags []lsp.Diagnostic) {
	rank := func(s lsp.Severity) int {
		if s == 0 {
			return int(lsp.SeverityError)
		}
		return int(s)
	}
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i], diags[j]
		if rank(a.Severity) != rank(b.Severity) {
			return rank(a.Severity) < rank(b.Severity)
		}
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line < b.Range.Start.Line
		}
		return a.Range.Start.Character < b.Range.Start.Character
	})
}

func toDiagnostic(path string, d lsp.Diagnostic) Diagnostic {
	msg := strings.Join(strings.Fields(d.Message), " ")
	if len(msg) > maxDiagnosticMessage {
		msg = textutil.CutUTF8(msg, maxDiagnosticMessage) + "…"
	}
	return Diagnostic{Path: path, Line: d.Range.Start.Line + 1, Column: d.Range.Start.Character + 1,
		Severity: d.Severity.String(), Code: d.CodeString(), Source: d.Source, Message: msg}
}

// formatDiagnostics writes the answer's lines for p.
func (c *CodeTools) formatDiagnostics(p DiagnosticsPayload) string {
	var b strings.Builder
	b.WriteString("\n\n")
	switch {
	case p.Server == "":
		fmt.Fprintf(&b, "No diagnostics for %s: %s.", p.Path, p.Note)
		return b.String()
	case p.Errors+p.Warnings == 0 && p.Note == "":
		fmt.Fprintf(&b, "%s reports no errors or warnings in %s.", p.Server, p.Path)
		return b.String()
	}
	fmt.Fprintf(&b, "%s reports %s and %s in %s", p.Server, count(p.Errors, "error"), count(p.Warnings, "warning"), p.Path)
	if p.Note != "" {
		fmt.Fprintf(&b, " (%s)", p.Note)
	}
	b.WriteString(":")
	writeDiagnosticLines(&b, p.Items)
	if p.Truncated {
		fmt.Fprintf(&b, "\n(%d more not shown)", p.Errors+p.Warnings-len(p.Items))
	}
	return b.String()
}

func writeDiagnosticLines(b *strings.Builder, items []Diagnostic) {
	for _, d := range items {
		fmt.Fprintf(b, "\n%s:%d:%d: %s", d.Path, d.Line, d.Column, d.Severity)
		if d.Code != "" {
			fmt.Fprintf(b, " [%s]", d.Code)
		}
		fmt.Fprintf(b, ": %s", d.Message)
	}
}

// count says "1 error", "2 errors".
func count(n int, noun string) string {
	return fmt.Sprintf("%d %s", n, plural(n, noun, noun+"s"))
}
