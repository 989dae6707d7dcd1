package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Positions at this package's boundary are zero-based lines and byte
// columns (as compilers print them, less one); they are converted to the
// server's encoding (UTF-8 or UTF-16) with the line's text.

// Report is what Diagnose learned about one file.
type Report struct {
	// Server names the server that answered ("" with none).
	Server string
	// Diagnostics are the file's, as last published, in byte columns.
	Diagnostics []Diagnostic
	// Fresh reports that they were published for this change; when
	// false, Note says why (still starting, no answer within the settle
	// time, crashed).
	Fresh bool
	Note  string
}

// Diagnose tells the file's server its new text (didOpen, or didChange
// and didSave) and waits, until ctx ends, for the diagnostics published
// for it, then for quiet past the last publish. A file no server handles
// gets ErrNoServer; every other trouble is a Note, never an error.
func (m *Manager) Diagnose(ctx context.Context, abs, text string, quiet time.Duration) (Report, error) {
	s, lang, err := m.ready(ctx, abs)
	if errors.Is(err, ErrNoServer) || errors.Is(err, ErrClosed) {
		return Report{}, err
	}
	if err != nil {
		return Report{Note: err.Error()}, nil
	}
	rep := Report{Server: s.spec.Name}
	uri := fileURI(abs)
	v, gen, err := s.sync(ctx, uri, lang, text)
	if err != nil {
		// A server that exits as it reads the change (a crash) closes the
		// connection under the next write: say it stopped, once its end
		// is known, not only that a write failed.
		t := time.NewTimer(time.Second)
		select {
		case <-s.exited:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		if !s.alive() {
			rep.Note = fmt.Sprintf("%s stopped before it was told of the change (%s)", s.spec.Name, s.failure())
			return rep, nil
		}
		rep.Note = fmt.Sprintf("%s was not told of the change: %v", s.spec.Name, err)
		return rep, nil
	}
	diags, fresh := s.waitDiagnostics(ctx, uri, v, gen, quiet)
	rep.Fresh = fresh
	rep.Diagnostics = s.toBytes(abs, text, diags)
	if !fresh {
		switch {
		case !s.alive():
			rep.Note = fmt.Sprintf("%s stopped before it answered (%s)", s.spec.Name, s.failure())
		default:
			rep.Note = fmt.Sprintf("%s published no diagnostics for this change within the settle time", s.spec.Name)
		}
	}
	return rep, nil
}

// toBytes converts the diagnostics' columns to bytes of text.
func (s *server) toBytes(abs, text string, diags []Diagnostic) []Diagnostic {
	out := make([]Diagnostic, len(diags))
	lines := splitLines(text)
	for i, d := range diags {
		d.Range = s.rangeToBytes(lines, d.Range)
		out[i] = d
	}
	return out
}

func (s *server) rangeToBytes(lines []string, r Range) Range {
	if s.utf8 || lines == nil {
		return r
	}
	conv := func(p Position) Position {
		if p.Line >= 0 && p.Line < len(lines) {
			p.Character = utf16ToByte(lines[p.Line], p.Character)
		}
		return p
	}
	return Range{Start: conv(r.Start), End: conv(r.End)}
}

// toServer converts a byte position in text to the server's encoding.
func (s *server) toServer(text string, p Position) Position {
	if s.utf8 {
		return p
	}
	lines := splitLines(text)
	if p.Line >= 0 && p.Line < len(lines) {
		p.Character = byteToUTF16(lines[p.Line], p.Character)
	}
	return p
}

func splitLines(text string) []string { return strings.Split(text, "\n") }

func byteToUTF16(line string, col int) int {
	n := 0
	for i, r := range line {
		if i >= col {
			break
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	if col > len(line) {
		n += col - len(line)
	}
	return n
}

func utf16ToByte(line string, col int) int {
	n := 0
	for i, r := range line {
		if n >= col {
			return i
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return len(line) + max(0, col-n)
}

// open makes sure the server has abs open with text, and returns it.
func (m *Manager) open(ctx context.Context, abs, text string) (*server, error) {
	s, lang, err := m.ready(ctx, abs)
	if err != nil {
		return nil, err
	}
	// The text is sent each time: it costs little and keeps the server on
	// what is on disk now.
	uri := fileURI(abs)
	v, gen, err := s.sync(ctx, uri, lang, text)
	if err != nil {
		return nil, err
	}
	if v == 1 {
		// Just opened: a server may answer from a project still loading
		// (typescript-language-server named an import as the definition,
		// and found the uses in this file only, until it had read the
		// others). Its first diagnostics for the file say it has; they are
		// awaited a bounded time.
		wctx, cancel := context.WithTimeout(ctx, m.opts.FirstOpenWait)
		s.waitDiagnostics(wctx, uri, v, gen, 0)
		cancel()
	}
	return s, nil
}

// locations converts a server's locations to byte columns.
func (m *Manager) locations(s *server, locs []Location) []Location {
	out := make([]Location, 0, len(locs))
	cache := map[string][]string{}
	for _, l := range locs {
		if !s.utf8 && m.opts.ReadFile != nil {
			abs := PathOf(l.URI)
			lines, ok := cache[abs]
			if !ok && abs != "" {
				if data, err := m.opts.ReadFile(abs); err == nil {
					lines = splitLines(string(data))
				}
				cache[abs] = lines
			}
			l.Range = s.rangeToBytes(lines, l.Range)
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.URI != b.URI {
			return a.URI < b.URI
		}
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line < b.Range.Start.Line
		}
		return a.Range.Start.Character < b.Range.Start.Character
	})
	return out
}

// decodeLocations reads Location | Location[] | LocationLink[] | null.
func decodeLocations(raw json.RawMessage) []Location {
	var one Location
	if json.Unmarshal(raw, &one) == nil && one.URI != "" {
		return []Location{one}
	}
	var many []struct {
		Location
		TargetURI            string `json:"targetUri"`
		TargetSelectionRange Range  `json:"targetSelectionRange"`
	}
	if json.Unmarshal(raw, &many) != nil {
		return nil
	}
	out := make([]Location, 0, len(many))
	for _, l := range many {
		if l.TargetURI != "" {
			out = append(out, Location{URI: l.TargetURI, Range: l.TargetSelectionRange})
		} else if l.URI != "" {
			out = append(out, l.Location)
		}
	}
	return out
}

func (m *Manager) positionCall(ctx context.Context, method, abs, text string, pos Position, extra map[string]any) (*server, json.RawMessage, error) {
	s, err := m.open(ctx, abs, text)
	if err != nil {
		return nil, nil, err
	}
	params := map[string]any{"textDocument": textDocumentIdentifier{URI: fileURI(abs)}, "position": s.toServer(text, pos)}
	for k, v := range extra {
		params[k] = v
	}
	var raw json.RawMessage
	if err := s.conn.Call(ctx, method, params, &raw); err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", s.spec.Name, method, err)
	}
	return s, raw, nil
}

// Definition returns where the symbol at pos is defined.
func (m *Manager) Definition(ctx context.Context, abs, text string, pos Position) ([]Location, error) {
	s, raw, err := m.positionCall(ctx, "textDocument/definition", abs, text, pos, nil)
	if err != nil {
		return nil, err
	}
	return m.locations(s, decodeLocations(raw)), nil
}

// References returns the uses of the symbol at pos, with its declaration
// when includeDeclaration.
func (m *Manager) References(ctx context.Context, abs, text string, pos Position, includeDeclaration bool) ([]Location, error) {
	s, raw, err := m.positionCall(ctx, "textDocument/references", abs, text, pos,
		map[string]any{"context": map[string]any{"includeDeclaration": includeDeclaration}})
	if err != nil {
		return nil, err
	}
	return m.locations(s, decodeLocations(raw)), nil
}

// Hover returns the server's hover text at pos ("" when none).
func (m *Manager) Hover(ctx context.Context, abs, text string, pos Position) (string, error) {
	_, raw, err := m.positionCall(ctx, "textDocument/hover", abs, text, pos, nil)
	if err != nil {
		return "", err
	}
	var h struct {
		Contents json.RawMessage `json:"contents"`
	}
	if json.Unmarshal(raw, &h) != nil {
		return "", nil
	}
	return hoverText(h.Contents), nil
}

// hoverText reads MarkupContent | MarkedString | MarkedString[].
func hoverText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var mc struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(raw, &mc) == nil && mc.Value != "" {
		return mc.Value
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		parts := make([]string, 0, len(list))
		for _, item := range list {
			if t := hoverText(item); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n\n")
	}
	return ""
}

// DocumentSymbols returns the symbols of one file, flattened, in order.
func (m *Manager) DocumentSymbols(ctx context.Context, abs, text string) ([]Symbol, error) {
	s, err := m.open(ctx, abs, text)
	if err != nil {
		return nil, err
	}
	uri := fileURI(abs)
	var raw json.RawMessage
	if err := s.conn.Call(ctx, "textDocument/documentSymbol", map[string]any{"textDocument": textDocumentIdentifier{URI: uri}}, &raw); err != nil {
		return nil, fmt.Errorf("%s: documentSymbol: %w", s.spec.Name, err)
	}
	lines := splitLines(text)
	var out []Symbol
	var probe []map[string]json.RawMessage
	_ = json.Unmarshal(raw, &probe)
	var tree []documentSymbol
	if len(probe) > 0 && probe[0]["location"] == nil && json.Unmarshal(raw, &tree) == nil {
		var walk func(list []documentSymbol, container string)
		walk = func(list []documentSymbol, container string) {
			for _, d := range list {
				out = append(out, Symbol{Name: d.Name, Kind: d.Kind, Container: container,
					Location: Location{URI: uri, Range: s.rangeToBytes(lines, d.SelectionRange)}})
				walk(d.Children, d.Name)
			}
		}
		walk(tree, "")
		return out, nil
	}
	var flat []symbolInformation
	_ = json.Unmarshal(raw, &flat)
	for _, si := range flat {
		si.Location.Range = s.rangeToBytes(lines, si.Location.Range)
		out = append(out, Symbol{Name: si.Name, Kind: si.Kind, Container: si.ContainerName, Location: si.Location})
	}
	return out, nil
}

// WorkspaceSymbols asks the server of abs's language for the symbols
// matching query across its workspace.
func (m *Manager) WorkspaceSymbols(ctx context.Context, abs, text, query string) ([]Symbol, error) {
	s, err := m.open(ctx, abs, text)
	if err != nil {
		return nil, err
	}
	var flat []symbolInformation
	if err := s.conn.Call(ctx, "workspace/symbol", map[string]any{"query": query}, &flat); err != nil {
		return nil, fmt.Errorf("%s: workspace/symbol: %w", s.spec.Name, err)
	}
	locs := make([]Location, len(flat))
	for i, si := range flat {
		locs[i] = si.Location
	}
	out := make([]Symbol, 0, len(flat))
	for i, si := range flat {
		l := m.locations(s, locs[i:i+1])
		out = append(out, Symbol{Name: si.Name, Kind: si.Kind, Container: si.ContainerName, Location: l[0]})
	}
	return out, nil
}

// Rename asks for the edits that rename the symbol at pos to newName, by
// absolute path, their ranges in byte columns of each file's text as
// ReadFile (or text, for abs) gives it. A server that asks to create,
// rename or delete files is refused.
func (m *Manager) Rename(ctx context.Context, abs, text string, pos Position, newName string) (map[string][]TextEdit, error) {
	s, raw, err := m.positionCall(ctx, "textDocument/rename", abs, text, pos, map[string]any{"newName": newName})
	if err != nil {
		return nil, err
	}
	var we WorkspaceEdit
	if err := json.Unmarshal(raw, &we); err != nil {
		return nil, fmt.Errorf("%s: rename: bad answer: %w", s.spec.Name, err)
	}
	byURI := map[string][]TextEdit{}
	for uri, edits := range we.Changes {
		byURI[uri] = append(byURI[uri], edits...)
	}
	for _, rawChange := range we.DocumentChanges {
		var dc textDocumentEdit
		if err := json.Unmarshal(rawChange, &dc); err != nil || dc.Kind != "" || dc.TextDocument.URI == "" {
			return nil, fmt.Errorf("%s: rename asks to create, rename or delete files; refused", s.spec.Name)
		}
		byURI[dc.TextDocument.URI] = append(byURI[dc.TextDocument.URI], dc.Edits...)
	}
	out := map[string][]TextEdit{}
	for uri, edits := range byURI {
		p := PathOf(uri)
		if p == "" {
			return nil, fmt.Errorf("%s: rename edits %s, not a file", s.spec.Name, uri)
		}
		var lines []string
		if p == abs {
			lines = splitLines(text)
		} else if !s.utf8 && m.opts.ReadFile != nil {
			if data, err := m.opts.ReadFile(p); err == nil {
				lines = splitLines(string(data))
			}
		}
		conv := make([]TextEdit, len(edits))
		for i, e := range edits {
			conv[i] = TextEdit{Range: s.rangeToBytes(lines, e.Range), NewText: e.NewText}
		}
		out[p] = conv
	}
	return out, nil
}

// Changed tells the server of abs, when one runs and has it open, its new
// text; other servers learn of it through the file system.
func (m *Manager) Changed(ctx context.Context, abs, text string) {
	spec, lang, ok := m.spec(abs)
	if !ok {
		return
	}
	key := spec.Name + "\x00" + m.rootOf(spec, abs)
	m.mu.Lock()
	e := m.servers[key]
	m.mu.Unlock()
	if e == nil || e.cur == nil || !isClosed(e.cur.ready) || e.cur.err != nil || !e.cur.alive() {
		return
	}
	uri := fileURI(abs)
	if e.cur.isOpen(uri) {
		_, _, _ = e.cur.sync(ctx, uri, lang, text)
		return
	}
	_ = e.cur.conn.Notify(ctx, "workspace/didChangeWatchedFiles", map[string]any{
		"changes": []any{map[string]any{"uri": uri, "type": 2}}})
}

// WorkspaceDiagnostics returns the last diagnostics every running server
// published, by absolute path. Columns are as the servers sent them for
// files not open.
func (m *Manager) WorkspaceDiagnostics() map[string][]Diagnostic {
	m.mu.Lock()
	var all []*server
	for _, e := range m.servers {
		if e.cur != nil && isClosed(e.cur.ready) && e.cur.err == nil {
			all = append(all, e.cur)
		}
	}
	m.mu.Unlock()
	out := map[string][]Diagnostic{}
	for _, s := range all {
		for uri, list := range s.allDiagnostics() {
			if p := PathOf(uri); p != "" {
				out[p] = append(out[p], list...)
			}
		}
	}
	return out
}
