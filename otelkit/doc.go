// Package otelkit instruments llmtoolkit with OpenTelemetry, following the
// GenAI semantic conventions of OpenTelemetry semantic conventions v1.41.0
// ([SemConvVersion]; status Development), and the gen_ai.execute_tool.duration
// metric that the GenAI conventions added after it. Every name it emits is in
// one file (semconv.go), so that following a change of the conventions is
// one edit.
//
// A host switches it on with one wrapper and one option:
//
//	tools := otelkit.Instrument(session)             // execute_tool spans and the duration histogram
//	opts := agentloop.Options{
//		Resolver: tools,
//		Tracer:   otelkit.Agent("coder", otelkit.WithProviderName("openai"), otelkit.WithModel("gpt-4.1")),
//	}                                                // invoke_agent and chat spans
//
// and, for MCP, gives [NewMetaPropagator] to mcp.WithPropagator on both
// sides, so that a call served over MCP appears in the caller's trace.
//
// The result, for a run with two tool calls made in parallel:
//
//	invoke_agent coder            INTERNAL
//	├── chat gpt-4.1              CLIENT    usage, finish reasons
//	├── execute_tool read_file    INTERNAL  (the two tool spans overlap)
//	├── execute_tool grep         INTERNAL
//	└── chat gpt-4.1              CLIENT
//
// # Dependencies and cost
//
// The package imports only the OpenTelemetry API modules
// (go.opentelemetry.io/otel, .../trace, .../metric); the host chooses and
// configures the SDK and exporters (the tests and the llmtoolkit command
// use them). Spans and measurements go to the global providers unless
// [WithTracerProvider] or [WithMeterProvider] say otherwise; while no
// provider is set, a wrapped call costs about 20 ns more and no
// allocation (BenchmarkResolve). The root package, agentloop and mcp do not import
// OpenTelemetry: agentloop reports to any [agentloop.Tracer], mcp carries
// the trace context through any mcp.MetaPropagator, so hosts that do not
// want OpenTelemetry never import it.
//
// # Content and secrets
//
// Tool arguments and results are recorded only with [WithCaptureContent],
// redacted exactly as package trace redacts them (the tool's
// SensitiveFields and [WithRedactFields] become [Redacted], their values and
// URL passwords are scrubbed from every text) and capped
// ([WithMaxContentBytes]). Error texts, always recorded as the span status,
// are scrubbed and capped the same way. Prompts and answers are never
// recorded. The parts a tool attaches (images, documents:
// [llmtoolkit.Attach]) are never recorded either, with or without
// capture: each gets an event "llmtoolkit.tool.part" on the tool's span
// with its kind, media type, size and SHA-256 (at most 64 per span;
// "llmtoolkit.parts.omitted" counts the rest). A call on a background job
// or a terminal (codetools' "job" Display, read with
// llmtoolkit.ShownDisplay) has llmtoolkit.job.id, llmtoolkit.job.event
// (start, read, write, stop), llmtoolkit.job.state, llmtoolkit.job.terminal
// and llmtoolkit.job.output_bytes on its span, and llmtoolkit.job.exit_code
// once the job ended; never its command or output unless captured.
//
// # Metrics and spans
//
// [Agent] honours [WithMeterProvider]: gen_ai.client.operation.duration for
// each chat and each invoke_agent, gen_ai.client.token.usage by token type;
// all histograms use the conventions' advised buckets (durations 10 ms to
// 81.92 s). gen_ai.provider.name (required) comes from [WithProviderName],
// else from an answer's provider state. A sub-agent traces its runs with
// agent.SubAgentConfig.Tracer, nested under its spawn_agent span; a call
// whose llmtoolkit.Scope.AgentID is not its run's is not tagged with the run's
// agent name.
//
// [Resolver] keeps the promise of trace.Recorder in span form: every call
// that reaches it is one span, refused and recipe calls included (through
// llmtoolkit.Tool.Observers); a recipe's span starts with its first step so
// its steps nest under it. Content is redacted with internal/redact exactly
// as trace redacts it (a test compares the two) and capped with
// internal/textutil.CutUTF8. With no provider set the wrapper checks two
// atomics and calls through: no allocation.
//
// A declared secret never leaves: TestDeclaredSecretsNeverLeave
// (secrets_property_test.go) plants one in a failing, a halting, a malformed
// and a recipe-step call and over MCP on either side (6 kinds), and checks 7
// channels: the rows on SQLite and PostgreSQL, span attributes, span
// statuses, metric attributes, slog records and the error texts the host
// gets. The conventions followed are checked by a test against
// OpenTelemetry's generated semconv/v1.41.0 package. This is a nested module;
// nothing imports it but cmd/llmtoolkit.
package otelkit
