package provider_test

import (
	"encoding/json"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

func Example() {
	tool := llmtoolkit.MustTool("get_weather", "Get the current weather in a city.", map[string]any{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required":   []any{"city"},
	})

	// Tool definitions, ready to put in a request body.
	tools, _ := json.Marshal(provider.OpenAITools([]llmtoolkit.Tool{tool}))
	fmt.Println(string(tools))

	// The assistant message of a Chat Completions response.
	msg := json.RawMessage(`{"role": "assistant", "content": null, "tool_calls": [
		{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}`)
	calls, err := provider.OpenAIToolCalls(msg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s(%v) id=%s\n", calls[0].Name, calls[0].Arguments, calls[0].ID)

	// The result, as the message that answers the call in each format.
	res := llmtoolkit.Result{ToolCallID: calls[0].ID, Name: calls[0].Name, Content: "18°C, cloudy"}
	for _, v := range []any{provider.OpenAIToolMessage(res), provider.AnthropicToolResult(res), provider.GeminiFunctionResponse(res)} {
		data, _ := json.Marshal(v)
		fmt.Println(string(data))
	}
	// Output:
	// [{"type":"function","function":{"name":"get_weather","description":"Get the current weather in a city.","parameters":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}}}]
	// get_weather(map[city:Paris]) id=call_1
	// {"role":"tool","content":"18°C, cloudy","tool_call_id":"call_1"}
	// {"type":"tool_result","tool_use_id":"call_1","content":"18°C, cloudy"}
	// {"functionResponse":{"id":"call_1","name":"get_weather","response":{"output":"18°C, cloudy"}}}
}

func ExampleGeminiSchema() {
	schema := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"additionalProperties": false,
		"properties": map[string]any{
			"unit": map[string]any{"const": "celsius"},
			"note": map[string]any{"type": []any{"string", "null"}},
		},
	}
	data, _ := json.Marshal(provider.GeminiSchema(schema))
	fmt.Println(string(data))
	// Output:
	// {"properties":{"note":{"nullable":true,"type":"STRING"},"unit":{"enum":["celsius"],"type":"STRING"}},"type":"OBJECT"}
}
