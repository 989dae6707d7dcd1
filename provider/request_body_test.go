package provider_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// hostBody is a request body of the host's own type.
type hostBody struct {
	Model    string                      `json:"model"`
	Messages []provider.AnthropicMessage `json:"messages,omitempty"`
}

// ptrMarshaler encodes itself through a pointer method, which
// encoding/json calls on a slice's (addressable) elements only.
type ptrMarshaler struct{ N int }

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"ptr"`), nil }

// ptrMap is a map that encodes itself through a pointer method.
type ptrMap map[string]any

func (p *ptrMap) MarshalJSON() ([]byte, error) { return []byte(`"ptr map"`), nil }

// MarshalRequest and WriteRequest write what json.Marshal writes, byte for
// byte, for bodies of every shape a host builds: escaping (HTML characters
// in text, a replayed block's raw JSON with spaces), nil and empty
// members, pointers, the host's own structs and maps, the types
// encoding/json encodes through their methods.
func TestMarshalRequestIsJSONMarshal(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n<&>\x00\xff")
	img := llmtoolkit.ImagePart("image/png", png)
	pdf := llmtoolkit.FilePart("a<b>.pdf", "application/pdf", []byte("%PDF-1.7 <&>"))
	result := llmtoolkit.Result{ToolCallID: "call<1>", Name: "read_file", Content: "a & b <c>", Parts: []llmtoolkit.Part{img, pdf, llmtoolkit.TextPart("more <text>")}}
	anthropic := provider.AnthropicToolResult(result)
	var nilMessages []provider.AnthropicMessage
	var nilContent *provider.GeminiContent
	bodies := map[string]any{
		"anthropic tool result": map[string]any{"messages": []provider.AnthropicMessage{{Role: "user", Content: []provider.AnthropicContentBlock{anthropic}}}},
		"anthropic raw block": map[string]any{"messages": []provider.AnthropicMessage{{Role: "assistant", Content: []provider.AnthropicContentBlock{
			{Raw: json.RawMessage(`{ "type": "text", "text": "<b> & </b>" }`)},
		}}}},
		"anthropic nil content":  []provider.AnthropicMessage{{Role: "user"}},
		"nil messages":           map[string]any{"messages": nilMessages, "system": nilContent},
		"gemini response parts":  map[string]any{"contents": []provider.GeminiContent{{Role: "user", Parts: []provider.GeminiPart{provider.GeminiFunctionResponse(result)}}}},
		"gemini user parts":      map[string]any{"contents": []*provider.GeminiContent{{Parts: provider.GeminiUserParts([]llmtoolkit.Part{img, pdf})}, nil}},
		"openai chat":            map[string]any{"messages": provider.OpenAIToolMessages([]llmtoolkit.Result{result})},
		"openai responses":       map[string]any{"input": []provider.OpenAIResponsesItem{provider.OpenAIResponsesToolOutput(result)}},
		"content parts":          []any{provider.OpenAIContentPart{Type: "image_url", MediaType: "image/<png>", Data: png}, provider.OpenAIResponsesContent{Type: "input_file", MediaType: "application/pdf", Data: png}},
		"source":                 map[string]*provider.AnthropicSource{"a": {Type: "base64", MediaType: "image/png", Data: png}, "b": nil},
		"host struct":            hostBody{Model: "m", Messages: []provider.AnthropicMessage{{Role: "user", Content: []provider.AnthropicContentBlock{anthropic}}}},
		"host map of strings":    map[string]string{"z": "<", "a": "&"},
		"int keys":               map[int]any{2: "b", 1: []provider.AnthropicMessage{{Role: "user"}}},
		"pointer method":         map[string]any{"x": []ptrMarshaler{{1}}, "y": ptrMarshaler{2}, "z": &ptrMarshaler{3}},
		"pointer method map":     map[string]any{"x": []ptrMap{{"a": []provider.AnthropicMessage{}}}, "y": ptrMap{"b": 1}},
		"raw message":            map[string]any{"raw": json.RawMessage(` [ "<" ] `)},
		"bytes":                  map[string]any{"b": png, "n": nil, "f": 1.5e300, "s": []string{"\u2028"}},
		"array":                  [2]provider.OpenAIMessage{{Role: "user", Parts: []provider.OpenAIContentPart{{Type: "text", Text: "<"}}}},
		"interface of interface": map[string]any{"a": []any{[]any{provider.OpenAIContentPart{Type: "file", MediaType: "application/pdf", Data: png}}}},
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(body)
			require.NoError(t, err)
			got, err := provider.MarshalRequest(body)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			assert.Equal(t, len(got), cap(got), "one buffer of its exact size")
			var buf bytes.Buffer
			require.NoError(t, provider.WriteRequest(&buf, body))
			assert.Equal(t, string(want), buf.String())
		})
	}
}

// A body json.Marshal refuses is refused, with encoding/json's error: a
// value of a type JSON has no form for, a map that holds itself (a cycle:
// refused, not walked without end).
func TestMarshalRequestRefusesWhatJSONRefuses(t *testing.T) {
	body := map[string]any{"messages": []provider.AnthropicMessage{{Role: "user"}}, "bad": func() {}}
	_, err := provider.MarshalRequest(body)
	var unsupported *json.UnsupportedTypeError
	require.ErrorAs(t, err, &unsupported)
	require.ErrorAs(t, provider.WriteRequest(io.Discard, body), &unsupported)

	cycle := map[string]any{"messages": []provider.AnthropicMessage{{Role: "user"}}}
	cycle["self"] = cycle
	_, err = provider.MarshalRequest(cycle)
	var unsupportedValue *json.UnsupportedValueError
	require.ErrorAs(t, err, &unsupportedValue)
	require.ErrorAs(t, provider.WriteRequest(io.Discard, cycle), &unsupportedValue)
}

// A body nested deeper than the walk goes is written by encoding/json
// from there on: the same bytes.
func TestMarshalRequestDeepBody(t *testing.T) {
	var body any = map[string]any{"messages": []provider.OpenAIMessage{{Role: "user", Parts: []provider.OpenAIContentPart{{Type: "image_url", MediaType: "image/png", Data: []byte("png")}}}}}
	for range 200 {
		body = []any{map[string]any{"x": body}}
	}
	want, err := json.Marshal(body)
	require.NoError(t, err)
	got, err := provider.MarshalRequest(body)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

var errWrite = errors.New("write failed")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errWrite
	}
	w.n -= len(p)
	return len(p), nil
}

// WriteRequest returns the writer's first error and stops writing there.
func TestWriteRequestReturnsTheWritersError(t *testing.T) {
	big := make([]byte, 1<<20)
	body := map[string]any{"messages": []provider.OpenAIMessage{{Role: "user", Parts: []provider.OpenAIContentPart{{Type: "image_url", MediaType: "image/png", Data: big}}}}}
	w := &failingWriter{n: 100 << 10}
	require.ErrorIs(t, provider.WriteRequest(w, body), errWrite)
}

// The base64 written in chunks joins into the whole's, for every length
// around a chunk's end.
func TestWriteRequestChunkBoundaries(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 12287, 12288, 12289, 12290, 3 * 12288, 3*12288 + 1, 40000} {
		data := bytes.Repeat([]byte{0xfb, 0xef, 0x01}, n/3+1)[:n]
		body := []provider.GeminiPart{{InlineData: &provider.GeminiBlob{MimeType: "image/png", Data: data}}}
		want, err := json.Marshal(body)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, provider.WriteRequest(&buf, body))
		require.Equal(t, string(want), buf.String(), "%d bytes", n)
	}
}

// MarshalRequest writes what json.Marshal writes whatever the text, the
// media types, the names and the bytes of the parts (escapes, invalid
// UTF-8, HTML characters, control characters).
func FuzzMarshalRequest(f *testing.F) {
	f.Add("a <b> & c", "image/png", "a.pdf", []byte("\x89PNG"), `{"type":"text","text":"<x>"}`)
	f.Add("\xff\u2028\x01", "image/\"gif", "\\", []byte{}, `[ 1, 2 ]`)
	f.Add("", "application/pdf", "", []byte{0, 1, 2}, `null`)
	f.Fuzz(func(t *testing.T, text, mediaType, name string, data []byte, raw string) {
		parts := []llmtoolkit.Part{
			llmtoolkit.TextPart(text), {Kind: llmtoolkit.PartImage, MediaType: mediaType, Data: data},
			llmtoolkit.ImagePart("image/png", data), llmtoolkit.FilePart(name, "application/pdf", data),
			llmtoolkit.FilePart(name, mediaType, data),
		}
		result := llmtoolkit.Result{ToolCallID: name, Name: "t", Content: text, Parts: parts}
		chat := provider.OpenAIToolMessages([]llmtoolkit.Result{result})
		chat = append(chat, provider.OpenAIMessage{Role: "user", Parts: []provider.OpenAIContentPart{{Type: "image_url", MediaType: mediaType, Data: data}}})
		bodies := []any{
			map[string]any{"messages": []provider.AnthropicMessage{{Role: "user", Content: []provider.AnthropicContentBlock{provider.AnthropicToolResult(result)}}}},
			map[string]any{"contents": []provider.GeminiContent{{Role: "user", Parts: append(provider.GeminiUserParts(parts), provider.GeminiFunctionResponse(result))}}},
			map[string]any{"messages": chat},
			map[string]any{"input": []provider.OpenAIResponsesItem{provider.OpenAIResponsesToolOutput(result)}},
		}
		if json.Valid([]byte(raw)) {
			bodies = append(bodies, map[string]any{
				"a": []provider.AnthropicContentBlock{{Raw: json.RawMessage(raw)}},
				"g": []provider.GeminiPart{{Raw: json.RawMessage(raw)}},
				"o": []provider.OpenAIResponsesItem{{Raw: json.RawMessage(raw)}},
			})
		}
		for _, body := range bodies {
			want, wantErr := json.Marshal(body)
			got, err := provider.MarshalRequest(body)
			if wantErr != nil {
				require.Error(t, err)
				continue
			}
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
			var buf bytes.Buffer
			require.NoError(t, provider.WriteRequest(&buf, body))
			require.Equal(t, string(want), buf.String())
		}
	})
}
