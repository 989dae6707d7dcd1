// Package eino joins llmtoolkit and cloudwego/eino (built and tested against
// github.com/cloudwego/eino v0.7.36, the newest the Go module proxy serves;
// on Go 1.26 eino needs github.com/bytedance/sonic v1.15.5 or later, which
// this module requires).
//
// # llmtoolkit's tools inside eino
//
// [Tools] turns every tool of a [llmtoolkit.Resolver] into an eino
// [tool.InvokableTool] with the same name, description and JSON Schema (the
// schema goes through eino's [schema.NewParamsOneOfByJSONSchema] and comes
// back from ToJSONSchema unchanged for all 12 codetools tools):
//
//	ct, _ := codetools.New(dir)
//	tools, _ := eino.Tools(ctx, ct)
//	agent, _ := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: m,
//		ToolsConfig: compose.ToolsNodeConfig{Tools: tools}})
//
// Every call runs through [llmtoolkit.Execute]: arguments validated against
// the schema, panics rescued, and every wrapper of the resolver (trace,
// permissions, telemetry) asked as it would be in llmtoolkit's own loop.
//
// Errors: eino has no "this call failed" flag on a tool's string result, and
// a Go error from InvokableRun aborts the whole graph run. So an error result
// (unknown tool, invalid or malformed arguments, a tool's error, a rescued
// panic, a denial) is returned as the tool's output with a nil error: the
// model reads the message and can try again, and the run goes on. Only a
// [llmtoolkit.Halt] is returned as a Go error (wrapping
// [llmtoolkit.ErrHalt]), since it asks the host to stop; [WithHaltAsResult]
// turns that off.
//
// Session and iteration: the call's id is eino's tool call id
// ([compose.GetToolCallID]), echoed as [llmtoolkit.Call.ID] and so in the
// trace. eino hands the context given to Generate or Stream down to each
// tool, so a session or iteration bound there with [llmtoolkit.Scope].Session
// or [llmtoolkit.Scope].Iteration reaches every call; [WithCallContext]
// derives them per call from the tool call id (eino has no iteration
// counter of its own).
//
// Parts ([llmtoolkit.Result.Parts]: images, documents): the adapted tools
// are eino InvokableTools, whose result is a string, so eino gets the text
// only; each part is named in a last line of it ("[not sent: image
// (image/png, N bytes) ...]"), its bytes are dropped.
//
// Display: eino's string result has no slot for it. It reaches the host
// through [WithDisplay] (for every call of the adapted tools) or, per run,
// through the implementation-specific tool option [WithDisplayTo], passed as
// react.WithToolOptions(eino.WithDisplayTo(fn)) or
// compose.WithToolsNodeOption(compose.WithToolOption(eino.WithDisplayTo(fn))).
// Without either it is dropped; the model never sees it in any case.
//
// Changing tool lists (the plan mode's switch): eino binds a ToolsNode's and
// a react agent's tools when they are built. Call [Tools] again and pass the
// new list for one run with react.WithTools (or compose.WithToolList and
// model.WithTools); a resolver whose list changes between runs is re-read
// only there. Within one run the list given is kept, but a call is always
// resolved by the resolver as it is now, so a tool the resolver no longer
// offers answers with its usual "unknown tool" error result.
//
// # eino's tools inside llmtoolkit
//
// [Resolver] turns eino tools into a [llmtoolkit.Resolver]: each ToolInfo's
// parameters (JSON Schema or eino's ParameterInfo map) become the tool's
// Parameters, and a call runs InvokableRun with the arguments as JSON; a Go
// error from the tool becomes an error result through Execute, as for any
// resolver. Compose, sessions, trace, the agent layer and MCP serving then
// apply to them. What cannot be carried:
//
//   - streams: a StreamableTool is read to its end and its chunks joined;
//     the model gets the whole text at once, and progress is not reported;
//   - multimodal results (EnhancedInvokableTool, EnhancedStreamableTool):
//     text parts become the text; images become image parts and audio,
//     video and files file parts ([llmtoolkit.Result.Parts], with no
//     name), from their base64 data or their URL; a part with neither, or
//     whose base64 does not decode (a stream that splits one part's data
//     across chunks), is dropped, with a note in the content saying how
//     many; a part's Extra is not carried;
//   - interrupts (tool.Interrupt, compose's interrupt and rerun) and
//     checkpoints: llmtoolkit has no resume, so an interrupt is an error
//     result saying the tool asked to interrupt;
//   - eino's tool call id: eino sets it in a context key of its own that
//     only eino's ToolsNode can set, so an eino tool run through llmtoolkit
//     sees "" from compose.GetToolCallID;
//   - eino's per-call tool options and callbacks: none are passed;
//   - ToolInfo.Extra and the tool's own schema keywords that eino's
//     jsonschema type does not model (they are dropped by eino before the
//     adapter sees them).
package eino
