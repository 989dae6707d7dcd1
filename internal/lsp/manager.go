package lsp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Options bound the servers a [Manager] runs. Zero fields take the
// defaults of [DefaultOptions].
type Options struct {
	// StartTimeout bounds a server's start, to the end of initialize.
	StartTimeout time.Duration
	// ShutdownTimeout bounds shutdown and exit at Close; past it the
	// server and its process group are killed.
	ShutdownTimeout time.Duration
	// MaxStderr is how many bytes of a server's stderr are kept (the
	// last ones); the rest is read and dropped.
	MaxStderr int
	// MaxFrame bounds one message a server sends; a larger one ends the
	// server's session (it is restarted once).
	MaxFrame int64
	// MaxDiagnosticsPerFile and MaxFiles bound what is kept of
	// publishDiagnostics.
	MaxDiagnosticsPerFile, MaxFiles int
	// FirstOpenWait bounds the wait, when a query (definition,
	// references, ...) first opens a file, for the server's first
	// diagnostics of it: a server still loading the project answers from
	// what it has read so far (typescript-language-server named an
	// import as the definition).
	FirstOpenWait time.Duration
	// MemoryLimit, when not 0, caps each server's memory in bytes: the
	// server and every process it starts run in a memory cgroup of their
	// own below this process's (Linux: memory.max under cgroup v2 when
	// this process's cgroup may enable the memory controller for its
	// children, memory.limit_in_bytes under a v1 memory hierarchy), which
	// bounds their sum; the kernel ends a process of it past the limit.
	// Where no such cgroup can be made (logged once, with why), it caps
	// each process's address space instead (RLIMIT_AS, inherited by what
	// it starts; Node-based servers reserve much address space: give
	// them several GiB).
	MemoryLimit uint64
	// ReadFile reads a file a server names, to turn its UTF-16 columns
	// into byte columns; nil reads nothing (columns stay as sent).
	ReadFile func(abs string) ([]byte, error)
	// Launch, when set, prepares each server's command (not started: the
	// manager sets its standard streams, starts and waits for it) and
	// returns the function that kills it with every process it started;
	// codetools runs the servers in its sandbox through it. An error
	// fails the server's start (its files get the error as a note). A nil
	// Launch, or a nil command, runs the server directly, in a process
	// group of its own.
	Launch func(Launch) (*exec.Cmd, func(), error)
	// Logger receives the one line per missing binary, starts, crashes
	// and restarts. Nil logs nothing.
	Logger *slog.Logger

	noCgroup *sync.Once // the one line saying MemoryLimit falls back to RLIMIT_AS
}

// DefaultOptions returns the defaults: 60 s to start, 2 s to shut down,
// 64 KiB of stderr, 64 MiB frames, 1,000 diagnostics per file and 10,000
// files, 10 s for a file's first diagnostics, no memory limit.
func DefaultOptions() Options {
	return Options{StartTimeout: 60 * time.Second, ShutdownTimeout: 2 * time.Second, MaxStderr: 64 << 10,
		MaxFrame: 64 << 20, MaxDiagnosticsPerFile: 1000, MaxFiles: 10_000, FirstOpenWait: 10 * time.Second}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.noCgroup == nil {
		o.noCgroup = new(sync.Once)
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = d.StartTimeout
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = d.ShutdownTimeout
	}
	if o.FirstOpenWait <= 0 {
		o.FirstOpenWait = d.FirstOpenWait
	}
	if o.MaxStderr <= 0 {
		o.MaxStderr = d.MaxStderr
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = d.MaxFrame
	}
	if o.MaxDiagnosticsPerFile <= 0 {
		o.MaxDiagnosticsPerFile = d.MaxDiagnosticsPerFile
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = d.MaxFiles
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Launch is a server's command as [Options].Launch receives it.
type Launch struct {
	Name   string   // the catalog entry's name
	Binary string   // the server's program, absolute (found on PATH)
	Argv   []string // the command to run: Binary and its arguments, under /bin/sh setting Options.MemoryLimit as RLIMIT_AS when no memory cgroup holds the server
	Dir    string   // the server's root, its working folder
	Env    []string // its environment
}

// ErrNoServer is returned for a file no server of the catalog serves, or
// whose server's binary is missing.
var ErrNoServer = errors.New("lsp: no language server for this file")

// Manager runs one server per catalog entry and root, started lazily when
// a file of its languages is first touched, restarted once after a crash,
// shut down at Close. It is safe for concurrent use.
type Manager struct {
	workspace string
	specs     []Spec
	opts      Options

	mu      sync.Mutex
	closed  bool
	servers map[string]*entry // by spec name and root
	missing map[string]bool   // spec names whose binary is missing (logged once)
}

type entry struct {
	cur      *server
	restarts int
	gaveUp   error // the server crashed again after its restart
}

// New returns a manager for the workspace folder (absolute), with the
// given servers (the first one serving a file's language wins).
func New(workspace string, specs []Spec, opts Options) *Manager {
	return &Manager{workspace: filepath.Clean(workspace), specs: specs, opts: opts.withDefaults(),
		servers: map[string]*entry{}, missing: map[string]bool{}}
}

// Workspace returns the folder the manager serves.
func (m *Manager) Workspace() string { return m.workspace }

// spec returns the spec serving abs and the language identifier.
func (m *Manager) spec(abs string) (Spec, string, bool) {
	base := filepath.Base(abs)
	ext := filepath.Ext(abs)
	for _, s := range m.specs {
		if lang, ok := s.Languages[base]; ok {
			return s, lang, true
		}
		if lang, ok := s.Languages[ext]; ok && ext != "" {
			return s, lang, true
		}
	}
	return Spec{}, "", false
}

// Handles reports whether some server of the catalog serves abs's
// language (its binary may still be missing).
func (m *Manager) Handles(abs string) bool {
	_, _, ok := m.spec(abs)
	return ok
}

// rootOf returns the nearest folder above abs, inside the workspace, with
// one of the markers; the workspace when none has.
func (m *Manager) rootOf(s Spec, abs string) string {
	for dir := filepath.Dir(abs); strings.HasPrefix(dir+string(filepath.Separator), m.workspace+string(filepath.Separator)); dir = filepath.Dir(dir) {
		for _, mk := range s.RootMarkers {
			if _, err := os.Lstat(filepath.Join(dir, mk)); err == nil {
				return dir
			}
		}
		if dir == m.workspace {
			break
		}
	}
	return m.workspace
}

// server returns the running server for abs, starting it (or restarting
// it once after a crash) when needed. It does not wait for initialize.
func (m *Manager) server(abs string) (*server, string, error) {
	spec, lang, ok := m.spec(abs)
	if !ok || len(spec.Command) == 0 {
		return nil, "", ErrNoServer
	}
	root := m.rootOf(spec, abs)
	key := spec.Name + "\x00" + root
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, "", ErrClosed
	}
	if m.missing[spec.Name] {
		return nil, "", ErrNoServer
	}
	e := m.servers[key]
	if e == nil {
		e = &entry{}
		m.servers[key] = e
	}
	if e.cur != nil && (!isClosed(e.cur.ready) || (e.cur.err == nil && e.cur.alive())) {
		return e.cur, lang, nil
	}
	if e.gaveUp != nil {
		return nil, "", e.gaveUp
	}
	if e.cur != nil { // it crashed, or failed to start
		why := e.cur.failure()
		if e.restarts >= 1 {
			e.gaveUp = fmt.Errorf("%s crashed again after a restart (%s); it is not started again", spec.Name, why)
			m.opts.Logger.Warn("lsp: server crashed again, giving up", "server", spec.Name, "root", root, "reason", why)
			return nil, "", e.gaveUp
		}
		e.restarts++
		m.opts.Logger.Warn("lsp: server crashed, restarting it once", "server", spec.Name, "root", root, "reason", why)
	}
	bin, err := exec.LookPath(spec.Command[0])
	if err != nil {
		m.missing[spec.Name] = true
		m.opts.Logger.Info("lsp: language server not found, its files get no diagnostics", "server", spec.Name, "command", spec.Command[0])
		return nil, "", fmt.Errorf("%w: %s is not installed", ErrNoServer, spec.Command[0])
	}
	s, err := start(spec, bin, root, &m.opts)
	if err != nil {
		e.cur = nil
		e.gaveUp = err
		return nil, "", err
	}
	m.opts.Logger.Debug("lsp: server started", "server", spec.Name, "root", root)
	e.cur = s
	return s, lang, nil
}

// failure says why a server ended or did not start.
func (s *server) failure() string {
	if isClosed(s.ready) && s.err != nil {
		return s.err.Error()
	}
	if isClosed(s.exited) && s.cmd.ProcessState != nil {
		why := s.cmd.ProcessState.String()
		if last := lastLine(s.stderr.String(), 300); last != "" {
			why += "; its stderr ends: " + last
		}
		return why
	}
	if err := s.conn.Err(); err != nil {
		return err.Error()
	}
	return "running"
}

// ready returns the server for abs once initialized, waiting at most
// until ctx ends.
func (m *Manager) ready(ctx context.Context, abs string) (*server, string, error) {
	s, lang, err := m.server(abs)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, "", fmt.Errorf("%s is still starting: %w", s.spec.Name, ctx.Err())
	}
	if s.err != nil {
		return nil, "", fmt.Errorf("%s failed to start: %w", s.spec.Name, s.err)
	}
	if !s.alive() {
		// Crashed after initialize: the next call restarts it once.
		return nil, "", fmt.Errorf("%s stopped (%s)", s.spec.Name, s.failure())
	}
	return s, lang, nil
}

// Close shuts every server down (killing those that ignore it, with their
// process groups) and makes later calls fail with [ErrClosed].
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	var all []*server
	for _, e := range m.servers {
		if e.cur != nil {
			all = append(all, e.cur)
		}
	}
	m.mu.Unlock()
	shutdownAll(all)
	return nil
}

// Restart ends every running server (shutdown, then kill) and forgets
// their starts and crashes: the next touch of a file starts its server
// afresh, through Options.Launch again. codetools calls it when the paths
// its servers must not see have grown.
func (m *Manager) Restart() {
	m.mu.Lock()
	var all []*server
	for key, e := range m.servers {
		if e.cur != nil {
			all = append(all, e.cur)
		}
		delete(m.servers, key)
	}
	m.mu.Unlock()
	shutdownAll(all)
}

// shutdownAll shuts the servers down at once and waits for their ends.
func shutdownAll(all []*server) {
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		spawn("lsp shutdown", func() {
			defer wg.Done()
			s.shutdown()
		})
	}
	wg.Wait()
}

// Stats describe one running server, for measures and notes.
type Stats struct {
	Name, Root  string
	PID         int
	RSS         int64 // resident bytes of the server and the processes it runs under and started (Linux), 0 when unknown
	StderrBytes int64 // bytes written to stderr in all
	Publishes   int64 // publishDiagnostics received
}

// Stats returns the running servers' figures, by name then root.
func (m *Manager) Stats() []Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Stats
	for _, e := range m.servers {
		s := e.cur
		if s == nil || s.cmd.Process == nil {
			continue
		}
		st := Stats{Name: s.spec.Name, Root: s.root, PID: s.cmd.Process.Pid, StderrBytes: s.stderr.Total()}
		st.RSS = rssTree(st.PID)
		s.mu.Lock()
		st.Publishes = s.floods
		s.mu.Unlock()
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name+out[i].Root < out[j].Name+out[j].Root })
	return out
}

// fileURI returns the file: URI of an absolute path.
func fileURI(abs string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// PathOf returns the absolute path of a file: URI, or "" for another
// scheme.
func PathOf(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

func baseName(p string) string { return filepath.Base(p) }

// lastLine returns the last non-empty line of text, cut to at most n
// bytes (its end kept).
func lastLine(text string, n int) string {
	text = strings.TrimRight(text, "\r\n\t ")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	text = strings.ToValidUTF8(strings.TrimSpace(text), "?")
	if len(text) > n {
		text = "…" + strings.ToValidUTF8(text[len(text)-n:], "")
	}
	return text
}
