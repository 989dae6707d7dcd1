// Package importrules holds the import rules of ARCHITECTURE.md's map as
// data, and its test checks them on every module of the repository
// (go list -json in the core and in each nested module): a package that
// imports what the map forbids fails the test, naming the edge and the
// rule.
//
// The rules:
//   - the root package imports no other package of this module but
//     internal/redact, the one scrubber of secrets (Execute's panic logs),
//     internal/jsonptr, the one resolver of a schema's local $refs,
//     internal/readcheck, the read checks a call carries (WithReadCheck),
//     and internal/schema, the validation engine;
//   - internal/* imports only other internal/* packages (and third-party
//     and standard packages);
//   - the engines (internal/search, internal/walk, internal/confine,
//     internal/proc, internal/jobs, internal/textedit, internal/patch, internal/web,
//     internal/lsp) are imported only by
//     codetools, bench/cmd/grepbench and other internal packages;
//   - each library package imports only the packages of this module its
//     row of [Allowed] names, plus internal/* where the row says so: for
//     example codetools only the root, trace not agentloop, agent only the
//     root and agentloop;
//   - otelkit is imported only by cmd/llmtoolkit;
//   - a package the map does not place (a new public package) is an error
//     until [Allowed] gives it a row.
package importrules

// Module is the core module's path; every package of the repository is
// under it.
const Module = "github.com/llmtoolkit/llmtoolkit"

// Rule is one row of the map: the packages of this module a library
// package may import (paths relative to [Module], "" for the root), and
// whether it may import internal/* packages.
type Rule struct {
	Imports  []string
	Internal bool
	// InternalOnly names the internal packages it may import when
	// Internal is false.
	InternalOnly []string
}

// Allowed is the map's row for each library package (relative paths).
// Commands, examples, benchmarks and tools (cmd/, examples/, bench/,
// tools/, and a nested module's examples/) may import
// every public package and the internal packages but the engines
// (grepbench excepted); conformance holds tests and the MCP conformance
// suite's server and client.
var Allowed = map[string]Rule{
	"":                {InternalOnly: []string{"internal/redact", "internal/jsonptr", "internal/readcheck", "internal/schema"}},
	"agentloop":       {Imports: []string{""}, Internal: true},
	"agent":           {Imports: []string{"", "agentloop"}, Internal: true},
	"agentresolver":   {Imports: []string{""}, Internal: true},
	"codetools":       {Imports: []string{""}, Internal: true},
	"trace":           {Imports: []string{""}, Internal: true},
	"mcp":             {Imports: []string{"", "skills"}, Internal: true},
	"provider":        {Imports: []string{"", "agentloop"}, Internal: true},
	"llmtoolkittest":  {Imports: []string{"", "agentloop"}, Internal: true},
	"toolsearch":      {Imports: []string{""}, Internal: true},
	"checkpoint":      {Imports: []string{"", "agentloop"}, Internal: true},
	"skills":          {Imports: []string{""}, Internal: true},
	"otelkit":         {Imports: []string{"", "agentloop", "checkpoint"}, Internal: true},
	"adapters/eino":   {Imports: []string{""}, Internal: true},
	"adapters/genkit": {Imports: []string{""}, Internal: true},
	"adapters/mcpgo":  {Imports: []string{"", "mcp"}, Internal: true},
	"conformance":     {Imports: []string{""}, Internal: true},
	// The MCP conformance suite's server and client (scripts/conformance.sh).
	"conformance/mcp/server": {Imports: []string{"", "mcp", "llmtoolkittest", "skills"}},
	"conformance/mcp/client": {Imports: []string{"", "mcp", "llmtoolkittest", "skills"}},
	"durable/dbos":           {Imports: []string{"", "agent", "agentloop", "trace", "mcp"}},
	"durable/temporal":       {Imports: []string{"", "agentloop"}},
	// A test-only module (its package holds a doc and the crash test).
	"durable/temporal/crashtest": {},
}

// Engines are the internal packages that hold codetools' engines.
var Engines = []string{"internal/search", "internal/walk", "internal/confine", "internal/proc", "internal/jobs", "internal/textedit", "internal/patch", "internal/web", "internal/lsp"}

// EngineImporters may import an engine, beside other internal packages.
var EngineImporters = []string{"codetools", "skills", "bench/cmd/grepbench"}

// OtelkitImporters may import otelkit.
var OtelkitImporters = []string{"cmd/llmtoolkit"}
