package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// server is one running language server for one root.
type server struct {
	spec   Spec
	root   string // absolute folder the server was initialized with
	opts   *Options
	cmd    *exec.Cmd
	killFn func() // kills the server with every process it started
	// launched: run by Options.Launch, perhaps in a PID namespace where
	// this process's id names another or none (initialize sends null).
	launched bool
	conn     *conn
	stderr   *tail
	exited   chan struct{} // closed when the process has been waited for
	ready    chan struct{} // closed when initialize has ended, either way
	err      error         // why it failed to start (set before ready closes)

	utf8 bool // the server counts characters in UTF-8 bytes (else UTF-16)
	caps struct {
		rename, references, definition, hover, symbols, workspaceSymbols bool
		syncKind                                                         int
	}

	mu      sync.Mutex
	docs    map[string]int // open document URI → its version
	diags   map[string]*fileDiags
	changed chan struct{} // closed and replaced at every publish
	floods  int64         // publishes received
}

// fileDiags are the diagnostics last published for one document.
type fileDiags struct {
	gen     uint64 // counts the publishes for this URI
	version *int
	list    []Diagnostic
}

// start launches the server and initializes it in the background; ready
// closes when that has ended.
func start(spec Spec, bin, root string, opts *Options) (*server, error) {
	s := &server{spec: spec, root: root, opts: opts, stderr: newTail(opts.MaxStderr),
		exited: make(chan struct{}), ready: make(chan struct{}),
		docs: map[string]int{}, diags: map[string]*fileDiags{}, changed: make(chan struct{})}
	cg := memoryCgroupFor(spec.Name, opts)
	cmd, kill, launched, err := prepare(spec, bin, root, opts, cg != nil)
	if err != nil {
		if cg != nil {
			cg.remove()
		}
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	s.killFn, s.launched = kill, launched
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = s.stderr
	cmd.WaitDelay = time.Second // a child holding stderr open cannot hold Wait
	if cg != nil {
		err = cg.start(cmd)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		if cg != nil {
			cg.remove()
		}
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	s.cmd = cmd
	if cg == nil && !launched { // a launcher's shell sets it (prepare)
		if err := limitMemory(cmd, opts.MemoryLimit); err != nil {
			opts.Logger.Warn("lsp: the memory limit could not be set", "server", spec.Name, "error", err)
		}
	}
	spawn("lsp wait", func() {
		_ = cmd.Wait()
		kill() // what it started goes with it
		if cg != nil {
			cg.remove()
		}
		close(s.exited)
	})
	s.conn = newConn(stdout, stdin, opts.MaxFrame, s.handle)
	spawn("lsp initialize", func() {
		ctx, cancel := context.WithTimeout(context.Background(), opts.StartTimeout)
		defer cancel()
		s.err = s.initialize(ctx)
		if s.err != nil {
			if errors.Is(s.err, context.DeadlineExceeded) {
				s.err = fmt.Errorf("%s did not answer initialize within %s", spec.Name, opts.StartTimeout)
			}
			s.kill()
		}
		close(s.ready)
	})
	return s, nil
}

func (s *server) initialize(ctx context.Context) error {
	uri := fileURI(s.root)
	var pid any = os.Getpid()
	if s.launched {
		pid = nil // servers watch the client's pid and exit when it is not theirs to see
	}
	params := map[string]any{
		"processId":  pid,
		"clientInfo": map[string]any{"name": "llmtoolkit"},
		"rootUri":    uri, "rootPath": s.root,
		"workspaceFolders": []any{map[string]any{"uri": uri, "name": baseName(s.root)}},
		"capabilities": map[string]any{
			"general": map[string]any{"positionEncodings": []string{"utf-8", "utf-16"}},
			"workspace": map[string]any{
				"configuration": true, "workspaceFolders": true,
				"symbol": map[string]any{},
			},
			"textDocument": map[string]any{
				"synchronization":    map[string]any{"didSave": true},
				"publishDiagnostics": map[string]any{"versionSupport": true},
				"definition":         map[string]any{"linkSupport": false},
				"references":         map[string]any{},
				"hover":              map[string]any{"contentFormat": []string{"plaintext", "markdown"}},
				"documentSymbol":     map[string]any{"hierarchicalDocumentSymbolSupport": true},
				"rename":             map[string]any{"prepareSupport": false},
			},
			"window": map[string]any{"workDoneProgress": false},
		},
	}
	if s.spec.InitializationOptions != nil {
		params["initializationOptions"] = s.spec.InitializationOptions
	}
	var res struct {
		Capabilities struct {
			PositionEncoding   string          `json:"positionEncoding"`
			TextDocumentSync   json.RawMessage `json:"textDocumentSync"`
			RenameProvider     json.RawMessage `json:"renameProvider"`
			ReferencesProvider json.RawMessage `json:"referencesProvider"`
			DefinitionProvider json.RawMessage `json:"definitionProvider"`
			HoverProvider      json.RawMessage `json:"hoverProvider"`
			DocumentSymbol     json.RawMessage `json:"documentSymbolProvider"`
			WorkspaceSymbol    json.RawMessage `json:"workspaceSymbolProvider"`
		} `json:"capabilities"`
	}
	if err := s.conn.Call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	c := res.Capabilities
	s.utf8 = c.PositionEncoding == "utf-8"
	s.caps.rename, s.caps.references, s.caps.definition = provides(c.RenameProvider), provides(c.ReferencesProvider), provides(c.DefinitionProvider)
	s.caps.hover, s.caps.symbols, s.caps.workspaceSymbols = provides(c.HoverProvider), provides(c.DocumentSymbol), provides(c.WorkspaceSymbol)
	s.caps.syncKind = 1
	var kind int
	var sync struct {
		Change int `json:"change"`
	}
	if json.Unmarshal(c.TextDocumentSync, &kind) == nil {
		s.caps.syncKind = kind
	} else if json.Unmarshal(c.TextDocumentSync, &sync) == nil {
		s.caps.syncKind = sync.Change
	}
	return s.conn.Notify(ctx, "initialized", map[string]any{})
}

// provides reads a capability that is a boolean or an options object.
func provides(raw json.RawMessage) bool {
	v := strings.TrimSpace(string(raw))
	return v != "" && v != "false" && v != "null"
}

// handle answers what the server sends.
func (s *server) handle(method string, params json.RawMessage) (any, error) {
	switch method {
	case "textDocument/publishDiagnostics":
		var p publishDiagnosticsParams
		if json.Unmarshal(params, &p) != nil {
			return nil, nil
		}
		if len(p.Diagnostics) > s.opts.MaxDiagnosticsPerFile {
			p.Diagnostics = p.Diagnostics[:s.opts.MaxDiagnosticsPerFile]
		}
		s.mu.Lock()
		s.floods++
		fd := s.diags[p.URI]
		if fd == nil {
			if _, open := s.docs[p.URI]; !open && len(s.diags) >= s.opts.MaxFiles {
				s.mu.Unlock()
				return nil, nil // bounded: past MaxFiles, files not open and not yet seen are dropped
			}
			fd = &fileDiags{}
			s.diags[p.URI] = fd
		}
		fd.gen++
		fd.version, fd.list = p.Version, p.Diagnostics
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
		return nil, nil
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		out := make([]any, len(p.Items))
		for i, it := range p.Items {
			out[i] = lookupSection(s.spec.Settings, it.Section)
		}
		return out, nil
	case "workspace/workspaceFolders":
		return []any{map[string]any{"uri": fileURI(s.root), "name": baseName(s.root)}}, nil
	case "workspace/applyEdit":
		// Edits reach files through the tools only.
		return map[string]any{"applied": false, "failureReason": "the client applies no edits a server asks for"}, nil
	case "client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create",
		"window/showMessageRequest", "workspace/diagnostic/refresh", "workspace/semanticTokens/refresh",
		"workspace/inlayHint/refresh", "workspace/codeLens/refresh":
		return nil, nil
	}
	return nil, nil
}

// lookupSection finds a dotted section in settings ("python.analysis").
func lookupSection(settings map[string]any, section string) any {
	if section == "" {
		if settings == nil {
			return nil
		}
		return settings
	}
	var cur any = settings
	for _, part := range strings.Split(section, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// alive reports whether the process still runs.
func (s *server) alive() bool { return !isClosed(s.exited) && s.conn.Err() == nil }

// kill ends the server and its group now.
func (s *server) kill() { s.killFn() }

// prepare makes the server's command, not started, and the function that
// kills it with every process it started: through Options.Launch, or
// directly in a process group of its own.
func prepare(spec Spec, bin, root string, opts *Options, inCgroup bool) (cmd *exec.Cmd, kill func(), launched bool, err error) {
	env := append(os.Environ(), spec.Env...)
	direct := func() (*exec.Cmd, func(), bool, error) {
		cmd := exec.Command(bin, spec.Command[1:]...)
		cmd.Dir, cmd.Env = root, env
		isolate(cmd)
		return cmd, func() { killGroup(cmd) }, false, nil
	}
	if opts.Launch == nil {
		return direct()
	}
	argv := append([]string{bin}, spec.Command[1:]...)
	if opts.MemoryLimit > 0 && !inCgroup {
		// The launcher's process is not the server's (a sandbox's init
		// starts it): the limit is set by a shell that then becomes it.
		kb := strconv.FormatUint(max(opts.MemoryLimit>>10, 1), 10)
		argv = append([]string{"/bin/sh", "-c", `ulimit -v ` + kb + ` && exec "$0" "$@"`}, argv...)
	}
	cmd, kill, err = opts.Launch(Launch{Name: spec.Name, Binary: bin, Argv: argv, Dir: root, Env: env})
	if err != nil {
		return nil, nil, false, err
	}
	if cmd == nil {
		return direct()
	}
	return cmd, kill, true, nil
}

// shutdown asks the server to end, and kills it with its group when it
// has not ended within the shutdown timeout.
func (s *server) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	if isClosed(s.ready) && s.err == nil && s.alive() {
		if s.conn.Call(ctx, "shutdown", nil, nil) == nil {
			_ = s.conn.Notify(ctx, "exit", nil)
		}
	}
	select {
	case <-s.exited:
	case <-ctx.Done():
	}
	s.kill()
	<-s.exited
}

// sync tells the server the document's new text: didOpen the first time,
// then didChange (the whole text) and didSave. It returns the document's
// version and the publish generation to wait past.
func (s *server) sync(ctx context.Context, uri, lang, text string) (int, uint64, error) {
	s.mu.Lock()
	v, open := s.docs[uri]
	v++
	s.docs[uri] = v
	var gen uint64
	if fd := s.diags[uri]; fd != nil {
		gen = fd.gen
	}
	s.mu.Unlock()
	if !open {
		err := s.conn.Notify(ctx, "textDocument/didOpen", map[string]any{
			"textDocument": textDocumentItem{URI: uri, LanguageID: lang, Version: v, Text: text}})
		return v, gen, err
	}
	if s.caps.syncKind != 0 {
		if err := s.conn.Notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument":   versionedTextDocumentIdentifier{URI: uri, Version: v},
			"contentChanges": []any{map[string]any{"text": text}},
		}); err != nil {
			return v, gen, err
		}
	}
	return v, gen, s.conn.Notify(ctx, "textDocument/didSave", map[string]any{"textDocument": textDocumentIdentifier{URI: uri}})
}

// isOpen reports whether the document has been opened at the server.
func (s *server) isOpen(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.docs[uri]
	return ok
}

// waitDiagnostics waits for a publish for uri past gen (and, when the
// server numbers them, for version at least), then for quiet without a
// further one, until ctx ends. It returns the diagnostics and whether
// they are fresh (published for this change).
func (s *server) waitDiagnostics(ctx context.Context, uri string, version int, gen uint64, quiet time.Duration) ([]Diagnostic, bool) {
	fresh := false
	var timer <-chan time.Time
	for {
		s.mu.Lock()
		fd := s.diags[uri]
		ch := s.changed
		if fd != nil && fd.gen > gen && (fd.version == nil || *fd.version >= version) {
			if !fresh {
				fresh = true
				timer = time.After(quiet)
			}
			gen = fd.gen
		}
		var list []Diagnostic
		if fd != nil {
			list = fd.list
		}
		s.mu.Unlock()
		select {
		case <-ch:
			if fresh {
				timer = time.After(quiet)
			}
		case <-timer:
			return list, true
		case <-ctx.Done():
			return list, fresh
		case <-s.exited:
			return list, fresh
		}
	}
}

// allDiagnostics returns the last diagnostics of every document.
func (s *server) allDiagnostics() map[string][]Diagnostic {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]Diagnostic, len(s.diags))
	for uri, fd := range s.diags {
		if len(fd.list) > 0 {
			out[uri] = fd.list
		}
	}
	return out
}

// tail keeps the last n bytes written to it and counts the rest.
type tail struct {
	mu    sync.Mutex
	buf   []byte
	n     int
	total int64
}

func newTail(n int) *tail { return &tail{n: n} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if len(p) >= t.n {
		t.buf = append(t.buf[:0], p[len(p)-t.n:]...)
		return len(p), nil
	}
	if over := len(t.buf) + len(p) - t.n; over > 0 {
		t.buf = t.buf[over:]
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// String returns the kept bytes.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Total returns how many bytes were written in all.
func (t *tail) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

var _ io.Writer = (*tail)(nil)

// newCgroup makes a server's memory cgroup (tests replace it).
var newCgroup = newMemoryCgroup

// memoryCgroupFor is the memory cgroup server name runs in under
// opts.MemoryLimit, nil when there is no limit or no cgroup can be made
// (then RLIMIT_AS bounds each process: logged once).
func memoryCgroupFor(name string, opts *Options) *memoryCgroup {
	if opts.MemoryLimit == 0 {
		return nil
	}
	cg, err := newCgroup(name, opts.MemoryLimit)
	if err != nil {
		opts.noCgroup.Do(func() {
			opts.Logger.Warn("lsp: no memory cgroup for the language servers; MemoryLimit caps each process's address space (RLIMIT_AS) instead, not their sum",
				"reason", err.Error())
		})
		return nil
	}
	return cg
}
