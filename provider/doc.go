// Package provider converts between llmtoolkit's types and the wire formats
// of the OpenAI Chat Completions, Anthropic Messages and Gemini
// generateContent APIs, with no SDK dependency: build the request with
// net/http and encoding/json, and use these functions for the tool parts.
//
// For each provider there is the same trio: the tool definitions
// ([OpenAITools], [AnthropicTools], [GeminiTools]), the tool calls of a
// model's answer ([OpenAIToolCalls], [AnthropicToolCalls], [GeminiToolCalls])
// and a tool's result ([OpenAIToolMessage], [AnthropicToolResult],
// [GeminiFunctionResponse]). Definitions and results are small exported
// structs with the providers' JSON tags: put them in a request as they are,
// and json.Marshal writes exactly the provider's shape. Answers are read
// from json.RawMessage, either the whole response body or the message in it.
//
// For hosts of package agentloop, [OpenAIMessages], [AnthropicMessages] and
// [GeminiContents] convert a whole conversation, and [OpenAIResponse],
// [AnthropicResponse] and [GeminiResponse] turn a response body into an
// [agentloop.Response], which is all a SendFunc needs.
//
// Gemini accepts only a subset of JSON Schema (OpenAPI 3.0 style):
// [GeminiSchema] converts a tool's parameters to it.
package provider
