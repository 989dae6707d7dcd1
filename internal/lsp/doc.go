// Package lsp is codetools' language-server client: it runs the servers
// of a catalog ([Catalog], extended by the host) over a workspace folder,
// tells them of each change a tool makes, and asks them for diagnostics,
// definitions, references, hover text, symbols and renames.
//
// # Protocol
//
// JSON-RPC 2.0 over the base protocol's Content-Length frames is written
// here by hand, with the few protocol types it needs (protocol.go). The
// libraries considered: go.lsp.dev/protocol (v0.12.0, March 2022,
// LSP 3.15, no release since) with go.lsp.dev/jsonrpc2, and
// charmbracelet's powernap (not served by the Go module proxy). A hand
// written client of some 300 lines bounds every frame before it is read
// (Options.MaxFrame; a header line is at most 4 KiB), answers the
// server's requests (workspace/configuration from Spec.Settings; an
// applyEdit is refused: edits reach files through the tools only), and
// adds no module to the core.
//
// # Lifecycle
//
// A [Manager] keeps one server per catalog entry and root: the nearest
// folder above a file, inside the workspace, holding one of the entry's
// RootMarkers (the workspace when none does). It starts the server when a
// file of its languages is first touched, initializes it with that root
// as its only workspace folder, and bounds the start by
// Options.StartTimeout (past it the server is killed). A server that
// crashes is started again once, at the next touch; after a second crash
// its files get a note and no server. A missing binary is logged once
// (one Info line) and its files get [ErrNoServer], which callers treat as
// "no diagnostics", never as an error. [Manager.Close] sends shutdown and
// exit, and kills the server with its process group (it runs in a group
// of its own, with PDEATHSIG) when it has not ended within
// Options.ShutdownTimeout; a server's children (gopls's go list) end with
// it. Its stderr is read to the end and its last Options.MaxStderr bytes
// kept. Options.MemoryLimit starts the server in a memory cgroup of its
// own where this process may make one (cgroup v2: cloned into it; v1: the
// forking thread moved in for the fork), bounding it and all it starts
// together; elsewhere, logged once, it sets RLIMIT_AS on the server right
// after it starts (node-based servers reserve much address space and need
// several GiB).
//
// # Bounds
//
// Every call waits at most until its context ends: a server that hangs
// at initialize, stops reading its input or floods diagnostics cannot
// hold an edit past its settle time. What is kept of publishDiagnostics
// is bounded per file (MaxDiagnosticsPerFile) and in files (MaxFiles;
// open documents are always kept).
//
// # Positions
//
// At this package's boundary lines are zero-based and columns are
// zero-based byte offsets in the line. The client offers UTF-8 positions;
// with a server that keeps UTF-16 they are converted with the line's text
// (Options.ReadFile reads the files the server names; codetools reads
// them through its root, so a file outside it keeps the server's column).
//
// # What the servers see
//
// The manager does not confine a server itself: Options.Launch prepares
// its command, and codetools runs every server through it in the
// sandbox (internal/sandbox: read-only, no network, the root readable
// but the paths the host's deny rules exclude, covered by empty ones;
// see codetools' doc). A launched server is sent a null processId: in
// its PID namespace this process's id is not its client's (servers that
// watch it, as typescript-language-server does, would exit). Without
// Launch a server runs as the host's user and reads what that user
// reads. Either way only files a tool touched are opened at the server,
// and codetools filters every location it is answered with through the
// call's excluded paths; locations outside the root are shown as
// read-only references.
package lsp
