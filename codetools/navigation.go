package codetools

// The navigation tools of language servers (WithLanguageServers):
// diagnostics, definition, references, hover, symbols and rename.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/lsp"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
	"github.com/llmtoolkit/llmtoolkit/internal/writecheck"
)

// maxLocations bounds the locations a navigation answer lists.
const maxLocations = 200

// navigationSpecs are the tools WithLanguageServers adds.
func (c *CodeTools) navigationSpecs() []toolSpec {
	if c.cfg.lsp.servers == nil {
		return nil
	}
	position := func(extra map[string]any, required ...string) map[string]any {
		props := map[string]any{
			"path":   pathProperty("The file, relative to the working directory."),
			"line":   map[string]any{"type": "integer", "minimum": 1, "description": "The line, 1-based."},
			"symbol": map[string]any{"type": "string", "minLength": 1, "description": "The name at that line to ask about (its first occurrence in the line); give it or column."},
			"column": map[string]any{"type": "integer", "minimum": 1, "description": "The column, 1-based, in bytes (as compilers print it); used when symbol is not given."},
		}
		for k, v := range extra {
			props[k] = v
		}
		return schemaObject(props, append([]string{"path", "line"}, required...)...)
	}
	ro := llmtoolkit.Annotations{ReadOnly: true, Idempotent: true}
	specs := []toolSpec{
		makeSpec("diagnostics",
			"Errors and warnings from the language server (gopls, pyright, tsserver, ...): of one file (it is read and sent to its server, which is started if need be), "+
				"or, without path, every file the running servers have reported on. Errors first, with line, column, code and message.",
			schemaObject(map[string]any{"path": pathProperty("The file; leave it out for the whole workspace.")}),
			ro, c.diagnosticsTool),
		makeSpec("definition",
			"Where the symbol at a position is defined, from the language server: path:line:column and the line. Locations outside the working directory (the standard library, a module cache) are shown as read-only references.",
			position(nil), ro, c.definitionTool),
		makeSpec("references",
			"Every use of the symbol at a position, across the project, from the language server: path:line:column and the line.",
			position(map[string]any{"includeDeclaration": map[string]any{"type": "boolean", "description": "Also list the declaration (default false)."}}),
			ro, c.referencesTool),
		makeSpec("hover",
			"The language server's description of the symbol at a position: its type, signature and documentation.",
			position(nil), ro, c.hoverTool),
		makeSpec("symbols",
			"Symbols from the language server: with query, those of the whole workspace whose names match it (path picks the language's server); without, those of the file at path (functions, types, fields...), with their lines.",
			schemaObject(map[string]any{
				"path":  pathProperty("A file: its symbols, or, with query, a file of the language whose workspace is searched."),
				"query": map[string]any{"type": "string", "minLength": 1, "description": "A name, or part of one, to find across the workspace."},
			}, "path"),
			ro, c.symbolsTool),
		makeSpec("rename",
			"Rename the symbol at a position everywhere it is used, as the language server computes it: one all-or-nothing edit of every file concerned "+
				"(if any file cannot be changed, none is; each file is a write the host decides on, as multi_edit's would be). Refused when a change would fall outside the working directory. Returns the diff of each file.",
			position(map[string]any{"newName": map[string]any{"type": "string", "minLength": 1, "description": "The new name."}}, "newName"),
			llmtoolkit.Annotations{Destructive: true}, c.renameTool),
	}
	for i := range specs {
		if specs[i].tool.Name == "rename" {
			specs[i].tool.Paths = c.writePathFact()
		} else {
			specs[i].tool.Paths = c.readPathFact(specs[i].tool.Name == "diagnostics")
		}
	}
	return specs
}

// serverFile reads the file a navigation tool names: its root-relative
// path, absolute path and text.
func (c *CodeTools) serverFile(ctx context.Context, p string) (rel, abs, text string, err error) {
	rel, err = c.canonical(ctx, "path", p, false)
	if err != nil {
		return "", "", "", err
	}
	if ex := boundExclusionsOf(ctx); ex.excluded(rel) {
		return "", "", "", fmt.Errorf("%s is in a path the host excludes", p)
	}
	abs = filepath.Join(c.dir, rel)
	if !c.lsp.Handles(abs) {
		return "", "", "", fmt.Errorf("no language server handles %s (the servers: %s)", p, c.serverNames())
	}
	c.serversScope(ctx)
	text, _, err = c.loadText(ctx, p, rel)
	return rel, abs, text, err
}

// boundExclusionsOf reads the host's excluded paths from ctx.
func boundExclusionsOf(ctx context.Context) *exclusions {
	_, ex := bindExclusions(ctx)
	return ex
}

func (c *CodeTools) serverNames() string {
	names := make([]string, len(c.cfg.lsp.servers))
	for i, s := range c.cfg.lsp.servers {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// position reads line and column (or symbol) into a zero-based position
// in text.
func position(args map[string]any, p, text string) (lsp.Position, error) {
	line := intArg(args, "line", 0)
	lines := strings.Split(text, "\n")
	if line < 1 || line > len(lines) {
		return lsp.Position{}, fmt.Errorf("line %d is outside %s, which has %d lines", line, p, len(lines))
	}
	lt := strings.TrimSuffix(lines[line-1], "\r")
	if sym := stringArg(args, "symbol", ""); sym != "" {
		col := strings.Index(lt, sym)
		if col < 0 {
			return lsp.Position{}, fmt.Errorf("%q is not on line %d of %s: %s", sym, line, p, textutil.CutUTF8(lt, 200))
		}
		return lsp.Position{Line: line - 1, Character: col}, nil
	}
	col := intArg(args, "column", 0)
	if col < 1 {
		return lsp.Position{}, errors.New("give symbol (the name to ask about) or column")
	}
	if col > len(lt)+1 {
		return lsp.Position{}, fmt.Errorf("column %d is past the end of line %d of %s (%d bytes)", col, line, p, len(lt))
	}
	return lsp.Position{Line: line - 1, Character: col - 1}, nil
}

// ctxSettle bounds a navigation call by the settle time's start allowance
// and the call's own context.
func (c *CodeTools) navContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, max(c.cfg.lsp.limits.Settle, c.cfg.lsp.limits.StartTimeout))
}

// showLocations writes locations as PATH:LINE:COL: TEXT lines: inside the
// root with the line's text, outside it as read-only references, in the
// host's excluded paths left out.
func (c *CodeTools) showLocations(ctx context.Context, b *strings.Builder, locs []lsp.Location) {
	ex := boundExclusionsOf(ctx)
	hidden, shown := 0, 0
	files := map[string][]string{}
	for _, l := range locs {
		abs := lsp.PathOf(l.URI)
		rel, inside := c.relOf(abs)
		if inside && ex.excluded(rel) {
			hidden++
			continue
		}
		if shown == maxLocations {
			fmt.Fprintf(b, "\n(%d more not shown)", len(locs)-hidden-shown)
			break
		}
		shown++
		line, col := l.Range.Start.Line+1, l.Range.Start.Character+1
		if !inside {
			fmt.Fprintf(b, "\n%s:%d:%d (outside the working directory: a read-only reference)", shownName(filepath.ToSlash(abs)), line, col)
			continue
		}
		lines, ok := files[rel]
		if !ok {
			if data, err := c.readForServer(abs); err == nil {
				lines = strings.Split(string(data), "\n")
			}
			files[rel] = lines
		}
		fmt.Fprintf(b, "\n%s:%d:%d", shownPath(rel), line, col)
		if l.Range.Start.Line < len(lines) {
			fmt.Fprintf(b, ": %s", shownName(textutil.CutUTF8(strings.TrimSpace(lines[l.Range.Start.Line]), 200)))
		}
	}
	if hidden > 0 {
		fmt.Fprintf(b, "\n(%d in paths the host excludes left out)", hidden)
	}
}

func (c *CodeTools) diagnosticsTool(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", "")
	if p != "" {
		rel, _, text, err := c.serverFile(ctx, p)
		if err != nil {
			return "", err
		}
		diags, lines := c.afterChange(ctx, "", rel, text)
		if diags == nil {
			return "", fmt.Errorf("no language server runs for %s", p)
		}
		llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayDiagnostics, Payload: *diags})
		return strings.TrimPrefix(lines, "\n\n"), nil
	}
	ex := boundExclusionsOf(ctx)
	c.serversScope(ctx)
	all := c.lsp.WorkspaceDiagnostics()
	var paths []string
	for abs := range all {
		if rel, ok := c.relOf(abs); ok && !ex.excluded(rel) {
			paths = append(paths, abs)
		}
	}
	sort.Strings(paths)
	// One payload over every file: each item names its file.
	pl := DiagnosticsPayload{Items: []Diagnostic{}}
	type item struct {
		rel string
		d   lsp.Diagnostic
	}
	var items []item
	for _, abs := range paths {
		rel, _ := c.relOf(abs)
		for _, d := range all[abs] {
			switch d.Severity {
			case lsp.SeverityError, 0:
				pl.Errors++
			case lsp.SeverityWarning:
				pl.Warnings++
			default:
				continue
			}
			items = append(items, item{rel, d})
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		ri, rj := items[i].d.Severity, items[j].d.Severity
		if ri == 0 {
			ri = lsp.SeverityError
		}
		if rj == 0 {
			rj = lsp.SeverityError
		}
		return ri < rj
	})
	for i, it := range items {
		if i >= c.cfg.lsp.limits.MaxShown {
			pl.Truncated = true
			break
		}
		pl.Items = append(pl.Items, toDiagnostic(shownPath(it.rel), it.d))
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayDiagnostics, Payload: pl})
	if pl.Errors+pl.Warnings == 0 {
		return "The running language servers report no errors or warnings (a server reports on the files it has been told of or has loaded; give path to check one file).", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The language servers report %s and %s:", count(pl.Errors, "error"), count(pl.Warnings, "warning"))
	writeDiagnosticLines(&b, pl.Items)
	if pl.Truncated {
		fmt.Fprintf(&b, "\n(%d more not shown)", pl.Errors+pl.Warnings-len(pl.Items))
	}
	return b.String(), nil
}

// positionTarget is what a tool asking about a position reads: the file
// and the position in it.
type positionTarget struct {
	rel, abs, text string
	pos            lsp.Position
}

// atPosition reads the file and position a navigation tool names.
func (c *CodeTools) atPosition(ctx context.Context, args map[string]any) (positionTarget, error) {
	p := stringArg(args, "path", "")
	rel, abs, text, err := c.serverFile(ctx, p)
	if err != nil {
		return positionTarget{}, err
	}
	pos, err := position(args, p, text)
	return positionTarget{rel, abs, text, pos}, err
}

func (c *CodeTools) locationTool(ctx context.Context, args map[string]any, what string,
	ask func(ctx context.Context, abs, text string, pos lsp.Position) ([]lsp.Location, error)) (string, error) {
	at, err := c.atPosition(ctx, args)
	if err != nil {
		return "", err
	}
	rel, pos := at.rel, at.pos
	nctx, cancel := c.navContext(ctx)
	defer cancel()
	locs, err := ask(nctx, at.abs, at.text, pos)
	if err != nil {
		return "", fmt.Errorf("%s at %s:%d:%d: %w", what, shownPath(rel), pos.Line+1, pos.Character+1, err)
	}
	var b strings.Builder
	if len(locs) == 0 {
		fmt.Fprintf(&b, "No %s found at %s:%d:%d.", what, shownPath(rel), pos.Line+1, pos.Character+1)
		return b.String(), nil
	}
	fmt.Fprintf(&b, "%s of the symbol at %s:%d:%d (%d):", upperFirst(what), shownPath(rel), pos.Line+1, pos.Character+1, len(locs))
	c.showLocations(ctx, &b, locs)
	return b.String(), nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (c *CodeTools) definitionTool(ctx context.Context, args map[string]any) (string, error) {
	return c.locationTool(ctx, args, "definition", c.lsp.Definition)
}

func (c *CodeTools) referencesTool(ctx context.Context, args map[string]any) (string, error) {
	decl := boolArg(args, "includeDeclaration", false)
	return c.locationTool(ctx, args, "references", func(ctx context.Context, abs, text string, pos lsp.Position) ([]lsp.Location, error) {
		return c.lsp.References(ctx, abs, text, pos, decl)
	})
}

func (c *CodeTools) hoverTool(ctx context.Context, args map[string]any) (string, error) {
	at, err := c.atPosition(ctx, args)
	if err != nil {
		return "", err
	}
	nctx, cancel := c.navContext(ctx)
	defer cancel()
	h, err := c.lsp.Hover(nctx, at.abs, at.text, at.pos)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(h) == "" {
		return fmt.Sprintf("The language server has nothing to say about %s:%d:%d.", shownPath(at.rel), at.pos.Line+1, at.pos.Character+1), nil
	}
	const maxHover = 8 << 10
	if len(h) > maxHover {
		h = textutil.CutUTF8(h, maxHover) + "\n(cut at 8 KiB)"
	}
	return h, nil
}

func (c *CodeTools) symbolsTool(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", "")
	rel, abs, text, err := c.serverFile(ctx, p)
	if err != nil {
		return "", err
	}
	nctx, cancel := c.navContext(ctx)
	defer cancel()
	query := stringArg(args, "query", "")
	var syms []lsp.Symbol
	if query != "" {
		syms, err = c.lsp.WorkspaceSymbols(nctx, abs, text, query)
	} else {
		syms, err = c.lsp.DocumentSymbols(nctx, abs, text)
	}
	if err != nil {
		return "", err
	}
	ex := boundExclusionsOf(ctx)
	var b strings.Builder
	if query != "" {
		fmt.Fprintf(&b, "Symbols matching %q:", query)
	} else {
		fmt.Fprintf(&b, "Symbols of %s:", shownPath(rel))
	}
	shown := 0
	for _, s := range syms {
		sabs := lsp.PathOf(s.Location.URI)
		srel, inside := c.relOf(sabs)
		if inside && ex.excluded(srel) {
			continue
		}
		if shown == maxLocations {
			b.WriteString("\n(more not shown)")
			break
		}
		shown++
		name := s.Name
		if s.Container != "" {
			name = s.Container + "." + s.Name
		}
		if inside {
			fmt.Fprintf(&b, "\n%s %s  %s:%d", lsp.SymbolKindName(s.Kind), shownName(name), shownPath(srel), s.Location.Range.Start.Line+1)
		} else {
			fmt.Fprintf(&b, "\n%s %s  %s:%d (outside the working directory)", lsp.SymbolKindName(s.Kind), shownName(name),
				shownName(filepath.ToSlash(sabs)), s.Location.Range.Start.Line+1)
		}
	}
	if shown == 0 {
		b.WriteString("\n(none)")
	}
	return b.String(), nil
}

// renameTool applies a rename as one all-or-nothing edit: every file is
// checked (inside the root, not excluded, a text file within the edit
// size) and its new text computed before any is written; a failed write
// puts back the files already written.
func (c *CodeTools) renameTool(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", "")
	newName := stringArg(args, "newName", "")
	rel, err := c.writeTarget(ctx, p)
	if err != nil {
		return "", err
	}
	at, err := c.atPosition(ctx, args)
	if err != nil {
		return "", err
	}
	pos := at.pos
	nctx, cancel := c.navContext(ctx)
	defer cancel()
	edits, err := c.lsp.Rename(nctx, at.abs, at.text, pos, newName)
	if err != nil {
		return "", fmt.Errorf("rename at %s:%d:%d: %w", shownPath(rel), pos.Line+1, pos.Character+1, err)
	}
	if len(edits) == 0 {
		return "", fmt.Errorf("the language server found nothing to rename at %s:%d:%d; nothing was changed", shownPath(rel), pos.Line+1, pos.Character+1)
	}
	ex := boundExclusionsOf(ctx)
	type change struct {
		rel, before, after string
		n                  int
	}
	var changes []change
	for fabs, list := range edits {
		frel, inside := c.relOf(fabs)
		if !inside {
			return "", fmt.Errorf("the rename would change %s, %w; nothing was changed", shownName(filepath.ToSlash(fabs)), ErrOutsideRoot)
		}
		if ex.excluded(frel) {
			return "", fmt.Errorf("the rename would change %s, in a path the host excludes; nothing was changed", shownPath(frel))
		}
		changes = append(changes, change{rel: frel, n: len(list)})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].rel < changes[j].rel })
	// Lock every file, in path order (no deadlock with another rename),
	// through the write tools' own confinement.
	for i := range changes {
		target, err := c.writeTarget(ctx, filepath.ToSlash(changes[i].rel))
		if err != nil {
			return "", fmt.Errorf("%w; nothing was changed", err)
		}
		changes[i].rel = target
	}
	// Every file is a write the host decides on, as multi_edit's would be
	// (the permission layer checked the named file only, with the call).
	for _, ch := range changes {
		if err := writecheck.Check(ctx, filepath.ToSlash(ch.rel)); err != nil {
			return "", fmt.Errorf("the rename would change %s: %w; nothing was changed", shownPath(ch.rel), err)
		}
	}
	for _, ch := range changes {
		defer c.locks.lock(ch.rel)()
	}
	for i := range changes {
		ch := &changes[i]
		before, _, err := c.loadText(ctx, shownPath(ch.rel), ch.rel)
		if err != nil {
			return "", fmt.Errorf("%w; nothing was changed", err)
		}
		after, err := lsp.ApplyEdits(before, edits[filepath.Join(c.dir, ch.rel)])
		if err != nil {
			return "", fmt.Errorf("the rename's edits of %s do not apply (%v; the file changed since the server read it?); nothing was changed", shownPath(ch.rel), err)
		}
		ch.before, ch.after = before, after
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	for i, ch := range changes {
		if err := c.writeAtomic(shownPath(ch.rel), ch.rel, ch.after); err != nil {
			var undo []error
			for _, done := range changes[:i] {
				undo = append(undo, c.writeAtomic(shownPath(done.rel), done.rel, done.before))
			}
			if uerr := errors.Join(undo...); uerr != nil {
				return "", fmt.Errorf("%w; putting back the files already renamed failed too: %w", err, uerr)
			}
			return "", fmt.Errorf("%w; the files already renamed were put back, nothing is changed", err)
		}
	}
	var b strings.Builder
	total := 0
	for _, ch := range changes {
		total += ch.n
	}
	fmt.Fprintf(&b, "Renamed to %s: %s in %s.", newName, count(total, "edit"), count(len(changes), "file"))
	for _, ch := range changes {
		c.lsp.Changed(ctx, filepath.Join(c.dir, ch.rel), ch.after)
		d := newTextDiff(ch.before, ch.after, c.cfg.diffContext)
		fmt.Fprintf(&b, "\n\n%s:\n%s", shownPath(ch.rel), d.compact(c.cfg.diffContext, max(10, c.cfg.diffMaxLines/len(changes))))
		if ch.rel == rel {
			pl := d.payload(shownPath(rel), c.cfg.diffContext)
			pl.Replacements = ch.n
			llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayDiff, Payload: pl})
		}
	}
	return b.String(), nil
}
