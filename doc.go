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
//
// # A first program
//
// A tool from a typed Go function, one call as a model would make it, and
// the result the model reads (the package's Example runs it):
//
//	type weatherArgs struct {
//		City string `json:"city" jsonschema:"City name, like Lisbon."`
//	}
//	r, _ := agentresolver.New(agentresolver.Func("weather", "Current weather for a city.",
//		func(ctx context.Context, a weatherArgs) (string, error) { return "sunny in " + a.City, nil }))
//	call, _ := llmtoolkit.ParseCall("call_1", "weather", `{"city": "Lisbon"}`)
//	res := llmtoolkit.Execute(ctx, r, call)
//	fmt.Println(res.Content) // sunny in Lisbon
//
// Execute never panics and never returns an error: a bad call (unknown tool,
// invalid arguments, a panic in the tool) is a Result with IsError set and a
// Content the model can act on. The README's Quick start adds the code
// tools, an audit trail and the agent loop; ARCHITECTURE.md maps the
// repository for whoever works on it.
//
// # Per-tool facts and how they travel
//
// Facts about one tool live on its definition, [Tool], never in an optional
// interface of the resolver. Every wrapper already passes definitions on (its
// Tools and LookupTool return them), so a fact reaches [Execute] and every
// layer below whatever the stack, including a wrapper a user writes that
// forwards nothing but Tools and Resolve.
//
//   - SensitiveFields: set by the tool's author (agentresolver.WithSensitiveFields,
//     or a handler's SensitiveFields(), put on the definition by
//     agentresolver.New); by mcp.Client from the remote tool's _meta
//     (mcp.MetaSensitiveFields, sent by mcp.Serve). Used by trace.Recorder and
//     otelkit (redaction and scrubbing), and agentloop (it scrubs the errors it
//     returns and logs).
//   - Recipe: set by the tool's author; Execute runs the plan instead of
//     resolving the call.
//   - Gates: set by wrappers that must decide every call (agent's guard adds
//     its check to each recipe definition it lists; a Session wraps each so
//     that it is asked with the session map bound). Execute asks them, in
//     order, before it runs a recipe's plan (a refusal is told to the
//     observers; changed arguments are validated again).
//   - Paths: set by the tool's author: which arguments are paths, and the
//     function the tool itself opens them with (codetools declares its ten
//     file tools). agent's guard matches path rules on the canonical path and
//     refuses what the tool would refuse.
//   - Commands: set by the tool's author: which arguments are shell commands
//     and what a call types into a running program (codetools' bash,
//     exec_command, write_stdin); agent's guard checks them as bash's.
//   - Observers: set by wrappers that must see every call (trace.Recorder and
//     otelkit.Resolver add themselves to each definition they list, through
//     [ObservedTools]: the wrapped resolver's list read afresh by every Tools
//     call, which agentloop makes every iteration, so never stale after an MCP
//     Refresh or a mode switch; LookupTool answers from the last list with one
//     map lookup, asking the wrapped resolver only for names it does not hold;
//     each observed copy reused while its definition is the same one: no
//     allocation in steady use); a Session wraps each so that it is told with
//     the session map bound, as the calls it resolves are. Execute (and Session
//     for recipe steps) tell them of calls answered without Resolve.
//   - Deferred: set by the tool's author, or on every tool of a resolver by
//     [Defer] (all of an MCP server's: Defer(client)); by mcp.Client from the
//     remote tool's _meta (mcp.MetaDeferred, sent by mcp.Serve). Package
//     toolsearch offers such a tool only once the model's tool_search found
//     it, and answers a call of one it has not found as an unknown tool;
//     package provider's ...WithSearch codecs write it as the provider's
//     "defer_loading".
//
// None of them has a JSON form (json:"-"): they are never sent to a model
// provider but as the provider's own deferral flag by the codecs asked to;
// to an MCP client only the sensitive field names and the deferral go, in
// the tool's _meta. A wrapper that builds new definitions instead of passing them on (as
// agentloop's Options.Tools does) prefers the wrapped resolver's definition
// where it has one. [ToolLookup] remains an optional interface, but only as a
// shortcut: it must find what Tools lists, so losing it costs speed, never a
// guarantee.
//
// One definition is not listed above the resolver that runs it: an undeclared
// step of a recipe a Session declares. The Session tells it, before the step
// runs, to the sinks bound in the context ([Listeners].Definition,
// [TellDefinition]); a trace.Recorder or an otelkit.Resolver that cannot find
// a call's definition binds one with [CatchDefinition], so it redacts that
// step's sensitive fields even from outside the Session, whatever wraps it.
//
// The rules of SensitiveFields: a plain name (token) matches that key at any
// depth; a dotted name (auth.token) matches that exact path from the top,
// arrays being passed through (users.pin reaches every element's pin); both
// without regard to case. agentresolver.New refuses a name that no argument
// can match (a typo must not leak a secret) and accepts any name where the
// schema is open (no described properties, additionalProperties not false,
// patternProperties, $ref).
//
// # The guarantees every wrapper keeps
//
// They hold for direct use, Compose in both orders, Filter, ReadOnly,
// PrepareSession's Session, nested mixtures and a user's own wrapper, with
// trace's Recorder inside or outside, through Execute and through
// agentloop.Run, on SQLite and PostgreSQL (trace's tests prove each).
//
//  1. Validation before the tool runs. Execute finds the definition through
//     any wrapper and validates the arguments against it, inside a panic
//     guard (NaN, ±Inf, an invalid json.Number and one whose exponent is
//     beyond big.Rat's limit are refused with a clear error). A refused call never reaches Resolve.
//     Undeclared steps of a declared recipe are validated by the Session
//     against their own definition.
//  2. One validation behaviour. The fast validator and the full one
//     (jsonschema/v5) agree on every input, format included: format is
//     asserted with the library's own checkers for schemas without $schema
//     and for drafts 4 to 7, and is an annotation for 2019-09 and 2020-12
//     .
//  3. Panics become results. A panic in a tool, in a resolver's Tools or
//     LookupTool, in validation, in a recipe or its Compose, in a gate, or in
//     an observer never escapes Execute ([TellObservers] is the one place
//     that rescues an observer's panic). agentloop turns a panic in the
//     SendFunc or its callbacks into errors of Run.
//  4. Recipes run wherever the definition goes. Execute runs the plan of any
//     definition with a Recipe; steps run through the same resolver stack,
//     without recipes of their own, each carrying [RecipeRunFrom]. A Session
//     that declares a recipe lets its undeclared steps run. Filter never lets
//     through a tool its function filtered out, even as a step; a step its
//     resolver did not list, of a recipe it kept, goes to that resolver, so a
//     Filter or ReadOnly over a Session runs the Session's recipes. A
//     recipe call that reaches a wrapper's Resolve outside Execute is run
//     by [ResolveRecipe] as Execute would, so that its steps go through
//     that wrapper too: the agent guard, Filter, Session, trace and otelkit
//     call it first, so every one of them sees the steps on both paths.
//  5. The iteration is known. agentloop puts the iteration on every call's
//     context ([Scope].Iteration); trace records it. A sub-agent's calls carry
//     its id ([Scope].AgentID, set by agent's spawn_agent).
//  6. The audit promise: see package trace.
//
// # Bounded schema validation
//
// Every subschema of the full validator's compiled copy counts its
// applications (internal/schema: a jsonschema extension on every schema
// object; one copy per running validation, idle copies kept per tool); past
// [ValidationSteps] (10,000) plus [ValidationStepsPerValue] (32) per value of
// the arguments the call is refused with [ErrSchemaTooComplex], and
// [Tool.ValidateArgumentsContext] (what Execute uses) answers when the
// context ends, the validation stopping within 256 steps (even for 24
// levels of $defs each naming the one below twice in a oneOf).
//
// # Malformed and invented calls
//
// A call whose arguments are not a JSON object is kept, not refused, by the
// provider parsers (Call.Malformed: raw text and parse error); Execute
// answers it with an error result that quotes both, tells the tool's
// observers (so trace and otelkit record it), and agentloop's circuit breaker
// counts it like any failure. A call to a name the model invented reaches the
// resolver stack like any call (answered with [ErrUnknownTool] and the real
// names), so it is recorded and counted the same way; only a call that is
// both malformed and to an invented name has no definition whose observers
// could be told: it is answered and counted, not recorded.
package llmtoolkit
