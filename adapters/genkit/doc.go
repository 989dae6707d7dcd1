// Package genkitadapter connects llmtoolkit and Firebase Genkit for Go
// (github.com/firebase/genkit/go v1.4.0, the newest version the Go module
// proxy serves), both ways. It is its own Go module, so llmtoolkit's core
// never requires genkit. Import it as genkitadapter.
//
// # llmtoolkit's tools in genkit
//
// [Tools] (or [ToolRefs], for ai.WithTools) turns every tool of a
// [llmtoolkit.Resolver] into a genkit tool with the same name, description
// and input schema, so three lines give a genkit generation llmtoolkit's
// code tools:
//
//	ct, _ := codetools.New(dir)
//	defer ct.Close()
//	resp, err := genkit.Generate(ctx, g, ai.WithPrompt(p), ai.WithTools(genkitadapter.ToolRefs(ct)...))
//
// A call runs through [llmtoolkit.Execute] (llmtoolkit's validation, panic
// rescue and every wrapper's guarantees), on the arguments exactly as the
// model sent them. genkit ends Generate on a tool's Go error; the adapted
// tools never return one: an error result reaches the model as the output
// {"error": MESSAGE} and the generation goes on. What is carried, and what
// is not:
//
//   - Schemas: genkit sends the model [llmtoolkit.Tool.Parameters] itself;
//     the 12 code tools' schemas come back byte-identical from the model
//     request genkit builds (tested).
//   - Validation: genkit validates a tool's input against its schema
//     before the tool runs, and ends Generate when it fails; the adapted
//     tools run a genkit action without an input schema, so llmtoolkit
//     validates instead and the model reads the message.
//   - Session and iteration: genkit's ai.ToolContext is the context given
//     to Generate, so [llmtoolkit.Scope].Session set there reaches every
//     call; [CountTurns] adds the iteration (genkit does not number turns
//     for tools).
//   - Call id: genkit does not hand a tool its request's ref, so
//     [llmtoolkit.Call.ID] is empty.
//   - Parts ([llmtoolkit.Result.Parts]: images, documents): the adapted
//     tools declare no multipart output, so genkit gets the text only;
//     each part is named in a last line of it ("[not sent: image
//     (image/png, N bytes) ...]"), its bytes are dropped.
//   - Display: genkit's tool response has no slot for it; it never reaches
//     the conversation. [WithOnResult] hands the host each full
//     [llmtoolkit.Result], Display included.
//   - Tool list changes (the plan mode's switch): genkit reads the tool
//     list once per Generate; build it again with [Tools] for the next
//     Generate. Within one Generate a call is resolved on the resolver as
//     it is then, so a tool that left the list answers with an error
//     result.
//   - Left to genkit: a call of a name that is not among the generation's
//     tools ends Generate before any adapter code runs ("tool not found");
//     so does running out of ai.WithMaxTurns.
//   - Telemetry: each call is still a genkit action span, and llmtoolkit's
//     own wrappers (trace, otelkit) see it too.
//
// # genkit's tools in a Resolver
//
// [FromTools] turns genkit tools into a [llmtoolkit.Resolver], so
// [llmtoolkit.Compose], sessions, trace, the agent layer and MCP serving
// apply to them. Lost on the way:
//
//   - Interrupts: a tool's ai.ToolContext.Interrupt cannot pause a
//     Resolver; the call fails with [ErrInterrupted] and its metadata.
//     Resumed and OriginalInput are never set.
//   - Multipart responses: the text parts are appended to the content;
//     media parts become parts ([llmtoolkit.Result.Parts]): a base64 data
//     URL decoded to its bytes (an image part for an image/* type, a file
//     part otherwise, with no name), any other URL kept as a part by URL;
//     data parts and media whose data URL does not decode are dropped (the
//     content says how many).
//   - Structured output: a non-string output is sent to the model as JSON
//     text; its output schema is not carried.
//   - genkit's names with a provider ("myplugin/tool") are outside
//     llmtoolkit's name pattern and are refused; register such tools under
//     plain names.
//   - Streaming: genkit tools do not stream; nothing is lost.
package genkitadapter
