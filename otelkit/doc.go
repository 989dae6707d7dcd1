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
// recorded.
package otelkit
