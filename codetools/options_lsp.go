package codetools

import (
	"log/slog"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/lsp"
)

// LanguageServer describes a language server the tools may run (see
// [WithLanguageServers]).
type LanguageServer struct {
	// Name names it in answers and logs ("gopls").
	Name string
	// Command is the program and its arguments; a program without a
	// slash is looked up on PATH when a file of its languages is first
	// touched. A missing program is logged once and its files get no
	// diagnostics, never an error.
	Command []string
	// Env is added to its environment.
	Env []string
	// Languages maps a file extension with its dot (".go"), or a whole
	// file name ("go.mod"), to the LSP language identifier sent for it.
	Languages map[string]string
	// RootMarkers make a folder a project root ("go.mod"): the nearest
	// folder above a file, inside the tools' root, that holds one is the
	// server's workspace; with none, the tools' root is.
	RootMarkers []string
	// InitializationOptions are sent in initialize.
	InitializationOptions any
	// Settings answer the server's workspace/configuration requests, by
	// dotted section.
	Settings map[string]any
	// Readable lists more folders the server reads in its sandbox (a
	// Python environment outside the system folders); see "Language
	// servers" in the package doc for what it reads without them.
	Readable []string
}

// DefaultLanguageServers returns the built-in catalog: gopls,
// pyright-langserver, typescript-language-server, rust-analyzer and
// clangd, each with its file types and root markers. Change the slice to
// add servers or replace one.
func DefaultLanguageServers() []LanguageServer {
	var out []LanguageServer
	for _, s := range lsp.Catalog() {
		out = append(out, LanguageServer{Name: s.Name, Command: s.Command, Env: s.Env, Languages: s.Languages,
			RootMarkers: s.RootMarkers, InitializationOptions: s.InitializationOptions, Settings: s.Settings})
	}
	return out
}

// LanguageServerLimits bound the language servers and what the tools wait
// for. A zero field keeps its default.
type LanguageServerLimits struct {
	// Settle bounds how long a change waits for its diagnostics (default
	// 3 s), the server's start included; past it the answer says the
	// server did not answer in time. A navigation tool's first query on
	// a file waits up to the longer of it and 10 s for the file's first
	// diagnostics (a server still loading the project answers wrongly).
	Settle time.Duration
	// Quiet is how long a change waits after a publish for another one
	// (default 150 ms).
	Quiet time.Duration
	// StartTimeout bounds a server's start to the end of initialize
	// (default 60 s; the server goes on starting after an edit's Settle).
	StartTimeout time.Duration
	// ShutdownTimeout bounds shutdown at Close (default 2 s); then the
	// server is killed with its process group.
	ShutdownTimeout time.Duration
	// MaxStderrBytes is how much of a server's stderr is kept (default
	// 64 KiB, the last bytes).
	MaxStderrBytes int
	// MemoryBytes caps each server's memory (Linux); 0, the default, sets
	// none. Where this process may make a memory cgroup below its own
	// (cgroup v2 with the memory controller delegated to it, or a v1
	// memory hierarchy it may write, as root), each server runs in one of
	// its own, the sandbox and every process the server starts (gopls's
	// go list, a compiler) with it: their sum is bounded, and the kernel
	// ends one of them past it. Elsewhere (one line logged, with why) it
	// caps each process's address space instead (RLIMIT_AS): Node-based
	// servers then need several GiB, and the processes' sum is not
	// bounded; to bound it, run the host in a cgroup (systemd-run --scope
	// -p MemoryMax=..., a container's memory limit).
	MemoryBytes uint64
	// MaxShown is how many diagnostics an answer lists (default 20,
	// errors first).
	MaxShown int
}

type lspConfig struct {
	servers []LanguageServer // nil: off
	limits  LanguageServerLimits
	off     map[string]bool // tools whose changes get no diagnostics
	logger  *slog.Logger

	unconfined bool // WithUnconfinedLanguageServers
}

// WithLanguageServers turns language servers on: after every change
// write_file, edit_file, multi_edit and append_to_file make, the file's
// server is told of it and, within the settle time, the file's errors and
// warnings are appended to the answer (errors first, capped) and set on
// the Display; the tools diagnostics, definition, references, hover,
// symbols and rename are added. With no server given, the
// [DefaultLanguageServers]. Servers start when a file of their language is
// first touched and stop at [CodeTools.Close]; see "Language servers" in
// the package doc. Without this option nothing of this changes.
func WithLanguageServers(servers ...LanguageServer) Option {
	return func(c *config) {
		if len(servers) == 0 {
			servers = DefaultLanguageServers()
		}
		c.lsp.servers = servers
	}
}

// WithLanguageServerLimits sets the bounds of [WithLanguageServers].
func WithLanguageServerLimits(l LanguageServerLimits) Option {
	return func(c *config) { c.lsp.limits = l }
}

// WithoutDiagnostics turns off the diagnostics after the changes of the
// named tools ("write_file", ...): their answers stay as without
// language servers.
func WithoutDiagnostics(tools ...string) Option {
	return func(c *config) {
		if c.lsp.off == nil {
			c.lsp.off = map[string]bool{}
		}
		for _, t := range tools {
			c.lsp.off[t] = true
		}
	}
}

// WithUnconfinedLanguageServers lets the language servers run without a
// sandbox where no backend runs (no bubblewrap, no Landlock): as the
// host's user, reading what that user reads, with the network. Without
// it, on such a machine, no server starts: one line is logged, once, and
// changes are answered without diagnostics (never an error). Even with
// it, a server is not started while the host's rules hide paths, which
// only a sandbox can hide from it. Where a backend runs, it changes
// nothing.
func WithUnconfinedLanguageServers() Option {
	return func(c *config) { c.lsp.unconfined = true }
}

// WithLanguageServerLogger sets where the language servers' events go (a
// missing binary, a crash, a restart); the default is slog.Default().
func WithLanguageServerLogger(l *slog.Logger) Option {
	return func(c *config) { c.lsp.logger = l }
}

func (l LanguageServerLimits) withDefaults() LanguageServerLimits {
	if l.Settle <= 0 {
		l.Settle = 3 * time.Second
	}
	if l.Quiet <= 0 {
		l.Quiet = 150 * time.Millisecond
	}
	if l.MaxShown <= 0 {
		l.MaxShown = 20
	}
	return l
}
