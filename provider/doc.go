// Package provider converts between llmtoolkit's types and the wire formats
// of the OpenAI Chat Completions and Responses APIs, the Anthropic Messages
// API and the Gemini generateContent API, with no SDK dependency: build the
// request with net/http and encoding/json, and use these functions for the
// tool parts.
//
// For each format there is the same trio: the tool definitions
// ([OpenAITools], [OpenAIResponsesTools], [AnthropicTools], [GeminiTools]),
// the tool calls of a model's answer ([OpenAIToolCalls],
// [OpenAIResponsesToolCalls], [AnthropicToolCalls], [GeminiToolCalls]) and
// a tool's result ([OpenAIToolMessage], [OpenAIResponsesToolOutput],
// [AnthropicToolResult], [GeminiFunctionResponse]). Definitions and results
// are small exported structs with the providers' JSON tags: put them in a
// request as they are, and json.Marshal writes exactly the provider's
// shape. Answers are read from json.RawMessage, either the whole response
// body or the message in it.
//
// For hosts of package agentloop, [OpenAIMessages], [OpenAIResponsesInput],
// [AnthropicMessages] and [GeminiContents] convert a whole conversation,
// and [OpenAIResponse], [OpenAIResponsesResponse], [AnthropicResponse] and
// [GeminiResponse] turn a response body into an [agentloop.Response],
// which is all a SendFunc needs. Streaming hosts feed each event to
// [OpenAIStream], [OpenAIResponsesStream], [AnthropicStream] or
// [GeminiStream] ([ReadSSE] reads the events) and take the same Response
// at the end.
//
// # Images and documents
//
// Tool results and user messages carry parts (llmtoolkit.Part): each
// format writes them as its API documents (see [AnthropicPartBlock],
// [OpenAIResponsesPart], [OpenAIToolMessages], [GeminiPartsPlacement]).
// A body holding large parts is best written with [MarshalRequest] (one
// buffer of its exact size) or [WriteRequest] (streamed to an io.Writer,
// such as an io.Pipe into the http.Request): the same bytes as
// json.Marshal, without its copies of the base64 (TestFiveMiBImageMemoryPerFormat:
// a 5 MiB image peaks at 2.4× its size, 1.04× streamed, against 5× to 7.7×).
//
// # Reasoning state
//
// Reasoning models return state beside the text and the calls that must
// come back, unchanged, in the next request: Anthropic's thinking and
// redacted_thinking blocks with their signatures, Gemini's thought
// signatures (on a functionCall part, and sometimes on text), OpenAI's
// reasoning items with their encrypted_content. The response parsers put it
// in [agentloop.Response.Provider] (and, for a signature that belongs to
// one call, in [llmtoolkit.Call.Provider]); agentloop keeps it on the
// assistant message; the history converters of the same format write it
// back, in its place; the other formats ignore it. Keys: [StateAnthropic],
// [StateGemini], [StateOpenAIResponses]. A turn that still says what the
// answer said is replayed exactly as it came; one a host edited keeps its
// reasoning blocks first and its calls' signatures on the calls.
//
// # Malformed calls
//
// A call whose arguments are not a JSON object does not fail the parse: it
// is returned as a [llmtoolkit.MalformedCall], which [llmtoolkit.Execute]
// answers with an error result quoting the arguments, so the model can
// send it again.
//
// # Schemas
//
// Gemini accepts only a subset of JSON Schema (OpenAPI 3.0 style):
// [GeminiSchema] converts a tool's parameters to it. OpenAI's strict mode
// needs closed objects with every property required: [OpenAIStrictSchema]
// converts a schema or says why it cannot, [OpenAIStrictTool] and
// [OpenAIResponsesStrictTool] build strict tools, and
// [OpenAIStrictArguments] turns the nulls a strict model sends for
// optional properties back into absent ones ([llmtoolkit.Execute] does
// too, before it validates a call: the function is for code that reads a
// call's arguments before Execute, or without it).
//
// # Call ids
//
// Every parser (responses and streams) gives an empty call id a made-up one
// ([GeneratedCallIDPrefix], Gemini's [GeminiCallIDPrefix], and the position)
// and a repeated one a -2, -3 suffix, so each result answers one call
// (TestCallIDsAreDistinct). Provider state travels in one opaque slot,
// llmtoolkit.ProviderState (a map of json.RawMessage keyed by wire format):
// agentloop.Response.Provider for an answer, agentloop.Message.Provider on
// the history's assistant messages, llmtoolkit.Call.Provider for what
// belongs to one call (its Gemini thoughtSignature, its Responses item id).
// Only this package reads or writes it, so a conversation can move between
// providers without one's state reaching another's request; hosts store it
// with the conversation (it has a JSON form) and leave it alone.
//
// # Native tools
//
// A tool whose llmtoolkit.Tool.Native is "anthropic/TYPE" is declared to
// Anthropic as that built-in client tool (the text editor, memory); one
// whose Native is "openai/apply_patch" or "openai/shell" to the Responses
// API as its own {"type": ...}, its apply_patch_call and shell_call items
// read as calls of the tool of that name and answered with
// apply_patch_call_output and shell_call_output items
// ([OpenAIResponsesCallOutput]); every other format sees a function tool of
// the same name (TestOpenAIResponsesNativeApplyPatchAndShell; conformance:
// openai-go's types).
//
// # Tool search
//
// The plain tool codecs send every definition as it is, deferred or not.
// Where the provider searches tools itself, [AnthropicToolsWithSearch] (the
// regex or BM25 search tool) and [OpenAIResponsesToolsWithSearch] (the
// hosted tool_search) write the deferred tools (llmtoolkit.Tool.Deferred)
// with "defer_loading": true, beside the search tool; the search's blocks
// (server_tool_use, tool_search_tool_result) and items (tool_search_call,
// tool_search_output) are kept in the provider state and replayed as they
// came, and [AnthropicToolReferences] and [OpenAIResponsesToolReferences]
// read the names the search loaded. For Chat Completions and Gemini, or a
// search on the host's side, use package toolsearch with the plain codecs
// (TestToolSearchClientSide, TestToolSearchNative: golden request bodies).
package provider
