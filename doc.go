// Package llmtoolkit gives LLM agents tools: well-defined, safe, fast and audited.
//
// The root package holds the contract every other package builds on:
//
//   - [Tool] describes a tool to a model: a name, a description and a JSON Schema
//     for its parameters. [NewTool] and [ToolFromMap] build validated tools, and
//     [Tool.ValidateArguments] checks a model's arguments against the schema,
//     compiled once and cached.
//   - [Call] is one tool call made by a model; [ParseCall] turns a provider's
//     JSON arguments string into one.
//   - [Resolver] maps a call to its execution. [Execute] is what an agent loop
//     calls: it validates the arguments, runs the tool (or its dispatch recipe),
//     rescues panics and always answers with a [Result] the model can act on.
//   - [Compose] joins several resolvers (first match wins), [PrepareSession]
//     limits a turn to the tools it declared and binds a session map into the
//     context, and [Filter] and [ReadOnly] narrow a resolver.
//
// The built-in coding tools live in package codetools, resolvers built from Go
// functions in agentresolver, the audit trail in trace, an agent loop in
// agentloop, provider wire formats in provider, and test fakes in llmtoolkittest.
package llmtoolkit
