// Package agentresolver builds an [llmtoolkit.Resolver] from Go values:
// typed Go functions and handler values become tools, with their schemas
// derived from Go types.
//
// A tool is a [Handler]: a definition and an Execute method. Write one as a
// value (it may keep state between calls, behind its own mutex), or derive
// one from a typed function with [Func], whose argument struct gives the
// schema:
//
//	type searchArgs struct {
//		Query string   `json:"query" jsonschema:"what to look for"`
//		Limit int      `json:"limit,omitempty" jsonschema:"results at most"`
//		Sort  string   `json:"sort,omitempty" jsonschema_enum:"relevance,date"`
//	}
//
//	r, err := agentresolver.New(
//		agentresolver.Func("search", "Search the notes.", search, agentresolver.WithReadOnly()),
//		&kvStore{},
//	)
//
// [New] checks every definition once and refuses duplicates. [Resolver.Resolve]
// validates a call's arguments against the tool's schema before the handler
// runs (an *llmtoolkit.ArgumentsError names each bad argument), passes the
// session bound in the context ([llmtoolkit.Scope].Session; or use
// [Resolver.ResolveWith]), rescues a handler's panic into an
// *llmtoolkit.PanicError and logs it with its stack through log/slog, and
// answers an unknown name with an error wrapping [llmtoolkit.ErrUnknownTool],
// so that [llmtoolkit.Compose] passes the call on.
//
// A handler or a typed function gives the model images and documents
// beside its text with [llmtoolkit.Attach] on the context it is given
// (see ExampleFunc_attach): [llmtoolkit.Execute] puts them on the result's
// Parts.
//
// Options ([WithTimeout], [WithSensitiveFields], [WithReadOnly] and the
// other annotations, [WithMetadata]) configure a [Func], or a handler value
// through [WithOptions]. Sensitive fields are set on each tool's definition
// ([llmtoolkit.Tool.SensitiveFields]), so they reach the trace recorder
// through every wrapper.
//
// Schemas derived by [Func] are accepted by every provider: "properties" on
// every object, no $ref or $defs (nested types are inlined), no boolean
// sub-schemas. Validation and decoding of a Func's arguments happen in one
// pass over a plan built once per Func, with no JSON round trip: a call with
// a few scalar arguments costs a few hundred nanoseconds and two allocations.
package agentresolver
