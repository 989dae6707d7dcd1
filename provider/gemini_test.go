package provider_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

func TestGeminiTools(t *testing.T) {
	meeting := llmtoolkit.MustTool("schedule_meeting", "Schedules a meeting with specified attendees at a given time and date.", map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"additionalProperties": false,
		"properties": map[string]any{
			"attendees": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "List of people attending the meeting."},
			"date":      map[string]any{"type": "string", "description": "Date of the meeting (e.g., '2024-07-29')"},
			"time":      map[string]any{"type": "string", "description": "Time of the meeting (e.g., '15:00')"},
			"topic":     map[string]any{"type": "string", "description": "The subject or topic of the meeting."},
		},
		"required": []any{"attendees", "date", "time", "topic"},
	})
	lights := llmtoolkit.MustTool("turn_on_the_lights", "Turn the lights on.", nil)
	assertJSON(t, "gemini_tools.json", provider.GeminiTools([]llmtoolkit.Tool{meeting, lights}))
	assert.Nil(t, provider.GeminiTools(nil))
}

func TestGeminiToolCalls(t *testing.T) {
	calls, err := provider.GeminiToolCalls(testdata(t, "gemini_response_function_calls.json"))
	require.NoError(t, err)
	assert.Equal(t, []llmtoolkit.Call{
		{ID: "gemini-call-1", Name: "turn_on_the_lights", Arguments: map[string]any{}},
		{ID: "gemini-call-2", Name: "set_light_color", Arguments: map[string]any{"rgb_hex": "ff0000"}},
	}, calls, "calls without ids get stable ones, in part order")

	calls, err = provider.GeminiToolCalls(testdata(t, "gemini_content_function_call_with_id.json"))
	require.NoError(t, err)
	require.Len(t, calls, 1)
	assert.Equal(t, "fc-8c9a1b2d", calls[0].ID, "an id given by the API is kept")
	assert.Equal(t, []any{"Bob", "Alice"}, calls[0].Arguments["attendees"])

	calls, err = provider.GeminiToolCalls(json.RawMessage(`[{"functionCall":{"name":"f"}}]`))
	require.NoError(t, err)
	assert.Equal(t, []llmtoolkit.Call{{ID: "gemini-call-1", Name: "f", Arguments: map[string]any{}}}, calls)
}

func TestGeminiToolCallsErrors(t *testing.T) {
	tests := []struct{ name, payload, want string }{
		{"blocked prompt", `{"candidates":[],"promptFeedback":{"blockReason":"SAFETY"}}`, "blockReason SAFETY"},
		{"no name", `{"parts":[{"functionCall":{"args":{}}}]}`, "parts[0]"},
		{"neither response nor content", `{"foo":1}`, `"candidates"`},
		{"not JSON", `{`, "Gemini"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provider.GeminiToolCalls(json.RawMessage(tc.payload))
			require.ErrorIs(t, err, provider.ErrInvalidPayload)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestGeminiFunctionResponse(t *testing.T) {
	for _, tc := range []struct {
		res  llmtoolkit.Result
		want string
	}{
		{llmtoolkit.Result{ToolCallID: "gemini-call-1", Name: "turn_on_the_lights", Content: "lights on"},
			`{"functionResponse":{"name":"turn_on_the_lights","response":{"output":"lights on"}}}`},
		{llmtoolkit.Result{ToolCallID: "fc-8c9a1b2d", Name: "schedule_meeting", Content: "calendar full", IsError: true},
			`{"functionResponse":{"id":"fc-8c9a1b2d","name":"schedule_meeting","response":{"error":"calendar full"}}}`},
	} {
		got, err := json.Marshal(provider.GeminiFunctionResponse(tc.res))
		require.NoError(t, err)
		assert.JSONEq(t, tc.want, string(got))
	}
}

func TestGeminiContents(t *testing.T) {
	calls, err := provider.GeminiToolCalls(testdata(t, "gemini_response_function_calls.json"))
	require.NoError(t, err)
	history := []agentloop.Message{
		agentloop.SystemMessage("You control the lights."),
		agentloop.UserMessage("Turn this place into a party!"),
		agentloop.AssistantMessage("", calls...),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: calls[0].ID, Name: calls[0].Name, Content: "lights on"}),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: calls[1].ID, Name: calls[1].Name, Content: "no such color", IsError: true}),
	}
	system, contents, err := provider.GeminiContents(history)
	require.NoError(t, err)
	assertJSON(t, "gemini_contents.json", map[string]any{"systemInstruction": system, "contents": contents})

	system, _, err = provider.GeminiContents([]agentloop.Message{agentloop.UserMessage("hi")})
	require.NoError(t, err)
	assert.Nil(t, system)
	_, _, err = provider.GeminiContents([]agentloop.Message{{Role: "robot"}})
	require.Error(t, err)
}

func TestGeminiResponse(t *testing.T) {
	resp, err := provider.GeminiResponse(testdata(t, "gemini_response_function_calls.json"))
	require.NoError(t, err)
	assert.Len(t, resp.ToolCalls, 2)
	assert.Equal(t, "STOP", resp.StopReason)
	assert.Equal(t, agentloop.Usage{InputTokens: 125, OutputTokens: 18, ContextTokens: 125}, resp.Usage)

	resp, err = provider.GeminiResponse(testdata(t, "gemini_response_text.json"))
	require.NoError(t, err)
	assert.Equal(t, "The lights are now red.", resp.Content)
	assert.Empty(t, resp.ToolCalls)

	resp, err = provider.GeminiResponse(testdata(t, "gemini_content_function_call_with_id.json"))
	require.NoError(t, err)
	assert.Equal(t, "Scheduling the meeting now.", resp.Content, "thought parts are left out")
}

func TestGeminiSchema(t *testing.T) {
	tests := []struct {
		name     string
		in, want string
	}{
		{
			name: "an ARRAY without items, in Gemini's spelling, gets items",
			in:   `{"type":"OBJECT","properties":{"a":{"type":"ARRAY"}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"ARRAY","items":{"type":"STRING"},"description":"Items: any value, given as text."}}}`,
		},
		{
			name: "formats Gemini accepts are kept in Gemini's spelling",
			in:   `{"type":"OBJECT","properties":{"n":{"type":"INTEGER","format":"int32"},"t":{"type":"STRING","format":"date-time"},"f":{"type":"Number","format":"float"}}}`,
			want: `{"type":"OBJECT","properties":{"n":{"type":"INTEGER","format":"int32"},"t":{"type":"STRING","format":"date-time"},"f":{"type":"NUMBER","format":"float"}}}`,
		},
		{
			name: "unsupported keywords are dropped",
			in:   `{"$schema":"x","$id":"y","type":"object","additionalProperties":false,"properties":{"n":{"type":"integer","exclusiveMinimum":0,"multipleOf":2,"minimum":1}},"required":["n"]}`,
			want: `{"type":"OBJECT","properties":{"n":{"type":"INTEGER","minimum":1}},"required":["n"]}`,
		},
		{
			name: "nullable type list",
			in:   `{"type":["string","null"],"description":"d"}`,
			want: `{"type":"STRING","nullable":true,"description":"d"}`,
		},
		{
			name: "several types become anyOf",
			in:   `{"type":["string","integer"],"description":"d"}`,
			want: `{"description":"d","anyOf":[{"type":"STRING"},{"type":"INTEGER"}]}`,
		},
		{
			name: "const becomes enum",
			in:   `{"const":"on"}`,
			want: `{"type":"STRING","enum":["on"]}`,
		},
		{
			name: "non-string enum goes to the description",
			in:   `{"type":"integer","enum":[1,2,3],"description":"Level."}`,
			want: `{"type":"INTEGER","description":"Level. One of: 1, 2, 3."}`,
		},
		{
			name: "null in enum means nullable",
			in:   `{"type":["string","null"],"enum":["a","b",null]}`,
			want: `{"type":"STRING","enum":["a","b"],"nullable":true}`,
		},
		{
			name: "formats",
			in:   `{"type":"object","properties":{"a":{"type":"string","format":"date-time"},"b":{"type":"string","format":"email"},"c":{"type":"integer","format":"int64"}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING","format":"date-time"},"b":{"type":"STRING","description":"Format: email."},"c":{"type":"INTEGER","format":"int64"}}}`,
		},
		{
			name: "refs are inlined, siblings win",
			in:   `{"type":"object","$defs":{"P":{"type":"object","description":"a point","properties":{"x":{"type":"number"}},"required":["x"]}},"properties":{"p":{"$ref":"#/$defs/P","description":"where"},"q":{"$ref":"#/definitions/Q"}},"definitions":{"Q":{"type":"boolean"}}}`,
			want: `{"type":"OBJECT","properties":{"p":{"type":"OBJECT","description":"where","properties":{"x":{"type":"NUMBER"}},"required":["x"]},"q":{"type":"BOOLEAN"}}}`,
		},
		{
			name: "recursive ref is cut",
			in:   `{"type":"object","properties":{"child":{"$ref":"#"}}}`,
			want: `{"type":"OBJECT","properties":{"child":{"type":"OBJECT","properties":{"child":{"type":"OBJECT","description":"(recursive definition of # omitted)"}}}}}`,
		},
		{
			name: "unresolved ref",
			in:   `{"$ref":"https://example.com/s.json"}`,
			want: `{"type":"OBJECT","description":"(unresolved reference https://example.com/s.json)"}`,
		},
		{
			name: "oneOf with null becomes nullable",
			in:   `{"oneOf":[{"type":"string"},{"type":"null"}]}`,
			want: `{"type":"STRING","nullable":true}`,
		},
		{
			name: "oneOf becomes anyOf",
			in:   `{"oneOf":[{"type":"string"},{"type":"number"}]}`,
			want: `{"anyOf":[{"type":"STRING"},{"type":"NUMBER"}]}`,
		},
		{
			name: "allOf is merged",
			in:   `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"number"}},"required":["b"]}]}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"NUMBER"}},"required":["a","b"]}`,
		},
		{
			name: "required keeps only known properties; empty properties dropped",
			in:   `{"type":"object","properties":{"a":{"type":"string"},"o":{"type":"object","properties":{}}},"required":["a","ghost"]}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"},"o":{"type":"OBJECT"}},"required":["a"]}`,
		},
		{
			name: "tuple items and examples",
			in:   `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"examples":[["a",1]],"minItems":2}`,
			want: `{"type":"ARRAY","items":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]},"example":["a",1],"minItems":2}`,
		},
		{
			name: "array without items gets items",
			in:   `{"type":"object","properties":{"tags":{"type":"array","description":"Tags."}}}`,
			want: `{"type":"OBJECT","properties":{"tags":{"type":"ARRAY","items":{"type":"STRING"},"description":"Tags. Items: any value, given as text."}}}`,
		},
		{
			name: "properties without type is an object",
			in:   `{"properties":{"a":{"properties":{"b":{"type":"string"}},"required":["b"]}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"OBJECT","properties":{"b":{"type":"STRING"}},"required":["b"]}}}`,
		},
		{
			name: "items without type is an array",
			in:   `{"items":{"type":"integer"}}`,
			want: `{"type":"ARRAY","items":{"type":"INTEGER"}}`,
		},
		{
			name: "type list branches keep only their own keywords",
			in:   `{"type":["string","array","null"],"items":{"type":"string"},"maxLength":5,"minItems":1,"description":"d"}`,
			want: `{"description":"d","nullable":true,"anyOf":[{"type":"STRING","maxLength":5},{"type":"ARRAY","items":{"type":"STRING"},"minItems":1}]}`,
		},
		{
			name: "an empty type is inferred",
			in:   `{"type":"","properties":{"a":{"type":"string"}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}`,
		},
		{
			name: "a type Gemini has no name for is inferred",
			in:   `{"type":"file","properties":{"a":{"type":"string"}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"}},"description":"Type: file."}`,
		},
		{
			name: "a typed schema keeps only its own type's keywords",
			in:   `{"type":"string","items":{"type":"string"},"minItems":1,"properties":{"a":{}},"required":["a"],"minimum":3,"maxLength":3}`,
			want: `{"type":"STRING","maxLength":3}`,
		},
		{
			name: "properties and items without type: an object",
			in:   `{"properties":{"a":{"type":"string"}},"items":{"type":"string"},"maxItems":2}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}`,
		},
		{
			name: "type Gemini has no name for",
			in:   `{"type":"file"}`,
			want: `{"description":"Type: file."}`,
		},
		{
			name: "type names in another case",
			in:   `{"type":"Object","properties":{"a":{"type":"String"},"b":{"type":["Integer","null"]}}}`,
			want: `{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"INTEGER","nullable":true}}}`,
		},
		{
			name: "boolean property schema",
			in:   `{"type":"object","properties":{"any":true}}`,
			want: `{"type":"OBJECT","properties":{"any":{}}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.in), &in))
			before, _ := json.Marshal(in)
			out := provider.GeminiSchema(in)
			got, err := json.Marshal(out)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
			after, _ := json.Marshal(in)
			assert.JSONEq(t, string(before), string(after), "the input is not modified")
		})
	}
}

func FuzzGeminiSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`,
		`{"allOf":[{"$ref":"#/allOf/0"}]}`,
		`{"type":["string","null"],"enum":[1,null,"x"],"const":3}`,
		`{"items":[{"oneOf":[{"type":"null"}]}],"required":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in map[string]any
		if json.Unmarshal(data, &in) != nil {
			return
		}
		out := provider.GeminiSchema(in)
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("output does not encode: %v", err)
		}
		for _, k := range []string{"$schema", "$ref", "$defs", "additionalProperties", "const", "oneOf", "allOf"} {
			if _, ok := out[k]; ok {
				t.Fatalf("output keeps %q: %v", k, out)
			}
		}
	})
}

func FuzzGeminiResponse(f *testing.F) {
	f.Add([]byte(testdata(f, "gemini_response_function_calls.json")))
	f.Add([]byte(`{"parts":[{"functionCall":{"name":"f","args":null}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := provider.GeminiResponse(data)
		if err != nil {
			return
		}
		for _, c := range resp.ToolCalls {
			if c.Name == "" || c.ID == "" || c.Arguments == nil {
				t.Fatalf("incomplete call: %+v", c)
			}
		}
	})
}

func TestGeminiSchemaBoundsFanOut(t *testing.T) {
	// Each definition uses the next one twice: 2^30 schemas if expanded.
	defs := map[string]any{"D30": map[string]any{"type": "string"}}
	for i := 29; i >= 0; i-- {
		next := map[string]any{"$ref": fmt.Sprintf("#/$defs/D%d", i+1)}
		defs[fmt.Sprintf("D%d", i)] = map[string]any{"type": "object", "properties": map[string]any{"a": next, "b": next}}
	}
	schema := map[string]any{"$defs": defs, "type": "object", "properties": map[string]any{"root": map[string]any{"$ref": "#/$defs/D0"}}}
	out := provider.GeminiSchema(schema)
	data, err := json.Marshal(out)
	require.NoError(t, err)
	assert.Less(t, len(data), 2_000_000)
	assert.Contains(t, string(data), "too large")
}
