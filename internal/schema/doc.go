// Package schema is the engine that validates a tool call's arguments
// against the tool's parameter schema (JSON Schema, through
// santhosh-tekuri/jsonschema), for the root package's Tool and Execute:
//
//   - [Compile] compiles a schema once; a [Schema] is safe for concurrent
//     use and keeps idle metered copies for the full validator.
//   - [Schema.FastValid] proves, without allocating, that arguments are
//     valid for the subset of JSON Schema tool definitions nearly always
//     use; outside it, or when the arguments fail, [Schema.Validate] gives
//     the complete answer ([Violations]). Both paths always agree (fuzzed).
//   - [Schema.Validate] is bounded: by [Steps] plus [StepsPerValue] per
//     JSON value (past it, [ErrTooComplex]) and by its context; a panic of
//     the validator is a [*PanicError]. [Schema.Nodes] measures a schema's
//     expanded size, for bounds on schemas from outside the host.
//   - [DropOptionalNulls] takes an optional property's null as left out
//     (a provider's strict mode sends null for what the model leaves out),
//     linear in the schema's size whatever its references.
//
// The root package keeps the names users call (Tool.ValidateArguments,
// ErrSchemaTooComplex, ValidationSteps, Tool.SchemaNodes) and turns these
// errors into its own (ArgumentsError, PanicError, ErrInvalidTool).
package schema
