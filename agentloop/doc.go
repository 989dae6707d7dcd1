// Package agentloop runs the agentic loop that every tool-using host needs:
// send the conversation to a model, execute the tool calls it asks for, send
// the results back, and repeat until the model answers without tools.
//
// The loop is transport-agnostic: the model is a [SendFunc] the host
// supplies, so any provider (see package provider for the OpenAI, Anthropic
// and Gemini wire formats) or a scripted fake (llmtoolkittest.ScriptedModel)
// plugs in. Tools run through [llmtoolkit.Execute], so unknown tools, invalid
// arguments and panics go back to the model as error results instead of
// ending the loop.
//
// Run stops with an error callers can branch on: [ErrMaxIterations], a
// [*CircuitBreakerError] (wrapping [ErrCircuitBreaker]) when a tool keeps
// failing the same way, a [*HaltedError] (wrapping [ErrHalted]) when a tool
// calls [llmtoolkit.Halt], an [*LLMError] when the model call fails, and the
// context's error when ctx ends. Hosts follow the loop as it runs through
// [Options.OnEvent] (each tool call, Display payload and result) and
// [Options.OnIteration] (each round with its timings).
package agentloop
