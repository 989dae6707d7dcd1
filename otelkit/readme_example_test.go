package otelkit_test

import (
	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// The README's OpenTelemetry snippet (examples/readme checks the copy):
// tool spans from the resolver, agent and chat spans from the loop.
func Example_readme() {
	var session llmtoolkit.Resolver = lt.NewFake(map[string]string{"read_file": "ok"})
	// readme:begin options
	opts := agentloop.Options{
		Resolver: otelkit.Instrument(session),                          // execute_tool spans, gen_ai.execute_tool.duration
		Tracer:   otelkit.Agent("coder", otelkit.WithModel("gpt-4.1")), // invoke_agent and chat spans
	}
	// readme:end
	_ = opts
}
