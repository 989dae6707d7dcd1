package otelkit

import "go.opentelemetry.io/otel/attribute"

// This file holds every name the package emits, so that following a change
// of the conventions is one edit here. The conventions followed are the
// GenAI semantic conventions of OpenTelemetry semantic conventions v1.41.0
// (status: Development), plus the gen_ai.execute_tool.duration metric of the
// GenAI conventions that continue in the semantic-conventions-genai
// repository.

// SemConvVersion is the version of the OpenTelemetry semantic conventions
// whose GenAI spans and attributes this package emits.
const SemConvVersion = "1.41.0"

// schemaURL is the telemetry schema of SemConvVersion.
const schemaURL = "https://opentelemetry.io/schemas/" + SemConvVersion

// scopeName names the instrumentation scope of every tracer and meter.
const scopeName = "github.com/llmtoolkit/llmtoolkit/otelkit"

// Operation names (gen_ai.operation.name), which also begin span names.
const (
	opExecuteTool = "execute_tool"
	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
)

// Attribute keys.
const (
	keyOperationName  = attribute.Key("gen_ai.operation.name")
	keyToolName       = attribute.Key("gen_ai.tool.name")
	keyToolCallID     = attribute.Key("gen_ai.tool.call.id")
	keyToolDesc       = attribute.Key("gen_ai.tool.description")
	keyToolType       = attribute.Key("gen_ai.tool.type")
	keyToolArguments  = attribute.Key("gen_ai.tool.call.arguments")
	keyToolResult     = attribute.Key("gen_ai.tool.call.result")
	keyAgentName      = attribute.Key("gen_ai.agent.name")
	keyProviderName   = attribute.Key("gen_ai.provider.name")
	keyRequestModel   = attribute.Key("gen_ai.request.model")
	keyInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	keyFinishReasons  = attribute.Key("gen_ai.response.finish_reasons")
	keyErrorType      = attribute.Key("error.type")
	toolTypeFunction  = "function" // gen_ai.tool.type of every llmtoolkit tool
	errorTypeFallback = "_OTHER"   // error.type when no class applies
)

// The span events of [AgentTracer.ContextChanged]: one per clearing,
// spill or compaction of agentloop's context policy, named after its
// agentloop.EventKind ("llmtoolkit.context.context_cleared", ...). These
// names are llmtoolkit's own, not the conventions'.
const (
	eventContextPrefix     = "llmtoolkit.context."
	keyContextTokensBefore = attribute.Key("llmtoolkit.context.tokens_before")
	keyContextTokensAfter  = attribute.Key("llmtoolkit.context.tokens_after")
	keyContextMessages     = attribute.Key("llmtoolkit.context.messages")
	keyContextIteration    = attribute.Key("llmtoolkit.context.iteration")
	keyContextSpillPath    = attribute.Key("llmtoolkit.context.spill_path")
)

// The parts a tool attached (images, documents): the conventions name
// none, so these are this package's own, one event per part on the
// execute_tool span, never the part's bytes or text.
const (
	eventToolPart    = "llmtoolkit.tool.part"
	keyPartKind      = attribute.Key("llmtoolkit.part.kind")
	keyPartMediaType = attribute.Key("llmtoolkit.part.media_type")
	keyPartBytes     = attribute.Key("llmtoolkit.part.bytes")
	keyPartSHA256    = attribute.Key("llmtoolkit.part.sha256")
	keyPartsOmitted  = attribute.Key("llmtoolkit.parts.omitted")
)

// The spans of [Checkpoints]: "checkpoint save" and "checkpoint rewind",
// llmtoolkit's own names, not the conventions'.
const (
	spanCheckpointPrefix = "checkpoint "
	keyCheckpointRoot    = attribute.Key("llmtoolkit.checkpoint.root")
	keyCheckpointID      = attribute.Key("llmtoolkit.checkpoint.id")
	keyCheckpointKind    = attribute.Key("llmtoolkit.checkpoint.kind")
	keyCheckpointEntries = attribute.Key("llmtoolkit.checkpoint.entries")
	keyCheckpointHashed  = attribute.Key("llmtoolkit.checkpoint.hashed_files")
	keyCheckpointStored  = attribute.Key("llmtoolkit.checkpoint.stored_bytes")
	keyCheckpointChanges = attribute.Key("llmtoolkit.checkpoint.changes")
	keyCheckpointSkipped = attribute.Key("llmtoolkit.checkpoint.skipped")
	keyCheckpointDryRun  = attribute.Key("llmtoolkit.checkpoint.dry_run")
)

// The execute_tool duration histogram.
const (
	metricToolDuration     = "gen_ai.execute_tool.duration"
	metricToolDurationUnit = "s"
	metricToolDurationDesc = "Duration of tool executions."
)

// toolDurationBuckets are the histogram's bucket boundaries, in seconds:
// the conventions' advice for the GenAI duration metrics, 10 ms to 82 s (a
// host wanting finer buckets for fast file tools sets a view).
var toolDurationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// The client metrics of the agent's operations ([Agent]): the duration of
// each chat (model call) and invoke_agent (run) operation, and the tokens
// of each chat.
const (
	metricOperationDuration     = "gen_ai.client.operation.duration"
	metricOperationDurationUnit = "s"
	metricOperationDurationDesc = "GenAI operation duration."
	metricTokenUsage            = "gen_ai.client.token.usage"
	metricTokenUsageUnit        = "{token}"
	metricTokenUsageDesc        = "Number of input and output tokens used."
	keyTokenType                = attribute.Key("gen_ai.token.type")
	// llmtoolkit's own: what a run cost (agentloop.RunEnd.Cost), on the
	// invoke_agent span and in a histogram, by provider and model.
	metricRunCost     = "llmtoolkit.agent.cost"
	metricRunCostUnit = "USD"
	metricRunCostDesc = "What an agent run's priced model calls cost, its sub-agents' included."
	keyCostUSD        = attribute.Key("llmtoolkit.cost.usd")
	keyCostUnpriced   = attribute.Key("llmtoolkit.cost.unpriced_calls")
	keyCostMissing    = attribute.Key("llmtoolkit.cost.missing_prices")
	tokenTypeInput    = "input"
	tokenTypeOutput   = "output"
)

// runCostBuckets are the bounds of llmtoolkit.agent.cost, in US dollars.
var runCostBuckets = []float64{0.0001, 0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 50, 100}

// tokenUsageBuckets are the conventions' advice for gen_ai.client.token.usage.
var tokenUsageBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}

// Error classes, the values of error.type on tool spans and on the
// duration metric (see [WithErrorClass]).
const (
	// ClassValidation: the arguments did not satisfy the tool's schema
	// (llmtoolkit.ErrInvalidArguments, llmtoolkit.ErrInvalidCall); the tool
	// did not run.
	ClassValidation = "validation"
	// ClassUnknownTool: no resolver has the tool (llmtoolkit.ErrUnknownTool).
	ClassUnknownTool = "unknown_tool"
	// ClassTimeout: the call's deadline expired (context.DeadlineExceeded).
	ClassTimeout = "timeout"
	// ClassCanceled: the call was cancelled (context.Canceled).
	ClassCanceled = "canceled"
	// ClassPanic: the tool panicked (llmtoolkit.ErrToolPanic).
	ClassPanic = "panic"
	// ClassDenied: a permission check refused the call
	// (llmtoolkit.ErrDenied, as package agent's guard answers), or the tool
	// refused to act (fs.ErrPermission, or an error classed so with
	// [WithErrorClass]).
	ClassDenied = "denied"
	// ClassHalt: the tool asked the agent loop to stop (llmtoolkit.ErrHalt).
	ClassHalt = "halt"
	// ClassToolError: any other failure of the tool.
	ClassToolError = "tool_error"
)

// Error classes of agent runs, the values of error.type on invoke_agent
// spans (model calls use ClassTimeout, ClassCanceled, ClassPanic, or the
// error's type).
const (
	// ClassMaxIterations: agentloop.ErrMaxIterations.
	ClassMaxIterations = "max_iterations"
	// ClassCircuitBreaker: agentloop.ErrCircuitBreaker.
	ClassCircuitBreaker = "circuit_breaker"
	// ClassHalted: agentloop.ErrHalted (a tool asked to stop).
	ClassHalted = "halted"
	// ClassModelError: an *agentloop.LLMError (the model call failed).
	ClassModelError = "model_error"
)

// Attribute keys read from the session map ([llmtoolkit.Scope].Session), as
// package trace reads it and an MCP server under mcp.WithBearerAuth sets it
// from the caller's token.
const (
	// keyConversationID is the session map's "conversation_id".
	keyConversationID = attribute.Key("gen_ai.conversation.id")
	// keyTenantID is the session map's "tenant_id" (no semantic convention
	// names a tenant: this one is llmtoolkit's).
	keyTenantID = attribute.Key("llmtoolkit.tenant.id")
)
