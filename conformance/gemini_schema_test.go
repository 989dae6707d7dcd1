package conformance_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/provider"
)

// TestGeminiSchemaSDKAccepts runs provider.GeminiSchema on the inputs of
// provider's TestGeminiSchema and checks each output against the official
// SDK's genai.Schema (see geminiSchemaProblems).
func TestGeminiSchemaSDKAccepts(t *testing.T) {
	tests := []struct{ name, in string }{
		{"unsupported keywords are dropped", `{"$schema":"x","$id":"y","type":"object","additionalProperties":false,"properties":{"n":{"type":"integer","exclusiveMinimum":0,"multipleOf":2,"minimum":1}},"required":["n"]}`},
		{"nullable type list", `{"type":["string","null"],"description":"d"}`},
		{"several types become anyOf", `{"type":["string","integer"],"description":"d"}`},
		{"const becomes enum", `{"const":"on"}`},
		{"non-string enum goes to the description", `{"type":"integer","enum":[1,2,3],"description":"Level."}`},
		{"null in enum means nullable", `{"type":["string","null"],"enum":["a","b",null]}`},
		{"formats", `{"type":"object","properties":{"a":{"type":"string","format":"date-time"},"b":{"type":"string","format":"email"},"c":{"type":"integer","format":"int64"}}}`},
		{"refs are inlined, siblings win", `{"type":"object","$defs":{"P":{"type":"object","description":"a point","properties":{"x":{"type":"number"}},"required":["x"]}},"properties":{"p":{"$ref":"#/$defs/P","description":"where"},"q":{"$ref":"#/definitions/Q"}},"definitions":{"Q":{"type":"boolean"}}}`},
		{"recursive ref is cut", `{"type":"object","properties":{"child":{"$ref":"#"}}}`},
		{"unresolved ref", `{"$ref":"https://example.com/s.json"}`},
		{"oneOf with null becomes nullable", `{"oneOf":[{"type":"string"},{"type":"null"}]}`},
		{"oneOf becomes anyOf", `{"oneOf":[{"type":"string"},{"type":"number"}]}`},
		{"allOf is merged", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"number"}},"required":["b"]}]}`},
		{"required keeps only known properties; empty properties dropped", `{"type":"object","properties":{"a":{"type":"string"},"o":{"type":"object","properties":{}}},"required":["a","ghost"]}`},
		{"tuple items and examples", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"examples":[["a",1]],"minItems":2}`},
		{"array without items gets items", `{"type":"object","properties":{"tags":{"type":"array","description":"Tags."}}}`},
		{"properties without type is an object", `{"properties":{"a":{"properties":{"b":{"type":"string"}},"required":["b"]}}}`},
		{"items without type is an array", `{"items":{"type":"integer"}}`},
		{"type list branches keep only their own keywords", `{"type":["string","array","null"],"items":{"type":"string"},"maxLength":5,"minItems":1,"description":"d"}`},
		{"an empty type is inferred", `{"type":"","properties":{"a":{"type":"string"}}}`},
		{"a type Gemini has no name for is inferred", `{"type":"file","properties":{"a":{"type":"string"}}}`},
		{"a typed schema keeps only its own type's keywords", `{"type":"string","items":{"type":"string"},"minItems":1,"properties":{"a":{}},"required":["a"],"minimum":3,"maxLength":3}`},
		{"properties and items without type: an object", `{"properties":{"a":{"type":"string"}},"items":{"type":"string"},"maxItems":2}`},
		{"type Gemini has no name for", `{"type":"file"}`},
		{"type names in another case", `{"type":"Object","properties":{"a":{"type":"String"},"b":{"type":["Integer","null"]}}}`},
		{"boolean property schema", `{"type":"object","properties":{"any":true}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.in), &in))
			assert.Empty(t, geminiSchemaProblems(provider.GeminiSchema(in)), "Gemini would refuse it")
		})
	}
}

// FuzzGeminiSchemaSDK: whatever the input, Gemini's SDK takes the output.
func FuzzGeminiSchemaSDK(f *testing.F) {
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
		if problems := geminiSchemaProblems(out); len(problems) > 0 {
			t.Fatalf("Gemini would refuse the schema of %s: %v", data, problems)
		}
	})
}
