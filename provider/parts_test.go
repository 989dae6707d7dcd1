package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// updateGolden rewrites the golden files of these tests instead of
// comparing with them.
var updateGolden = os.Getenv("LLMTOOLKIT_UPDATE_GOLDEN") != ""

// golden compares body, indented, with testdata/name.
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, body, "", "  "))
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if updateGolden {
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with LLMTOOLKIT_UPDATE_GOLDEN=1 to write it")
	assert.JSONEq(t, string(want), buf.String(), "%s differs", name)
}

// tinyPNG is a 2x2 PNG, the same bytes on every run.
func tinyPNG(t testing.TB) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.NRGBA{255, 0, 0, 255})
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

var finalAnswers = map[string]string{
	"anthropic":        "anthropic_response_thinking_text.json",
	"gemini":           "gemini_response_text.json",
	"openai-responses": "openai_responses_text.json",
	"openai-chat":      "openai_response_text.json",
}

// A scripted agent run per format: the model asks read_file for a PNG of
// the workspace; the next request holds the image as the provider
// documents it (golden files; the SDK types in the conformance module),
// and the model's next answer is read back.
func TestReadFilePNGReachesEachFormat(t *testing.T) {
	for name, w := range wires {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pngBytes := tinyPNG(t)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "chart.png"), pngBytes, 0o644))
			ct, err := codetools.New(dir)
			require.NoError(t, err)
			defer ct.Close()
			_, tools := llmtoolkit.PrepareSession(ct, []string{"read_file"}, nil)
			var bodies [][]byte
			record := func(history []agentloop.Message, tools []llmtoolkit.Tool) []byte {
				body := w.request(t, history, tools)
				w.sdk(t, body)
				bodies = append(bodies, body)
				return body
			}
			model := llmtoolkittest.NewScriptedModel(t,
				llmtoolkittest.Respond(func(_ context.Context, history []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
					record(history, tools)
					return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "call_1", Name: "read_file", Arguments: map[string]any{"path": "chart.png"}}}}, nil
				}),
				llmtoolkittest.Respond(func(_ context.Context, history []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
					record(history, tools)
					return w.parse(testdata(t, finalAnswers[name]))
				}),
			)
			resp, history, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("What does chart.png show?")},
				model.Send, agentloop.Options{Resolver: tools})
			require.NoError(t, err)
			want, err := w.parse(testdata(t, finalAnswers[name]))
			require.NoError(t, err)
			assert.Equal(t, want.Content, resp.Content, "the model's answer is read back")
			require.Len(t, bodies, 2)
			require.Len(t, history, 4)
			require.Len(t, history[2].Parts, 1, "the tool message carries the image")
			assert.Equal(t, pngBytes, history[2].Parts[0].Data)

			second := field(t, bodies[1], w.history)
			golden(t, "parts_read_file_png_"+name+".json", second)
			assert.Contains(t, string(second), b64(pngBytes), "the image's bytes are in the request, base64")
		})
	}
}

func b64(b []byte) string {
	s, _ := json.Marshal(b)
	return string(s[1 : len(s)-1])
}

// A user message's parts, and every kind of part in a tool result, in
// each format: what a format cannot carry is named in the text.
func TestPartsInEachFormat(t *testing.T) {
	parts := []llmtoolkit.Part{
		llmtoolkit.TextPart("more text"),
		llmtoolkit.ImagePart("image/png", []byte("png-bytes")),
		llmtoolkit.ImagePart("image/gif", []byte("gif-bytes")),
		llmtoolkit.ImageURLPart("image/jpeg", "https://example.com/a.jpg"),
		llmtoolkit.FilePart("report.pdf", "application/pdf", []byte("%PDF-1.7")),
		llmtoolkit.FilePart("clip.wav", "audio/wav", []byte("RIFF-wav")),
	}
	history := []agentloop.Message{
		agentloop.UserMessageWithParts("Look at these.", parts...),
		agentloop.AssistantMessage("", llmtoolkit.Call{ID: "call_1", Name: "get_weather", Arguments: map[string]any{"location": "Paris"}},
			llmtoolkit.Call{ID: "call_2", Name: "get_time", Arguments: map[string]any{"timezone": "UTC"}}),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: "call_1", Name: "get_weather", Content: "sunny", Parts: parts}),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: "call_2", Name: "get_time", Content: "12:00"}),
		agentloop.UserMessage("Thanks."),
	}
	tools := weatherTools().Tools()
	for name, w := range wires {
		t.Run(name, func(t *testing.T) {
			body := w.request(t, history, tools)
			w.sdk(t, body)
			golden(t, "parts_all_kinds_"+name+".json", field(t, body, w.history))
			assert.Contains(t, string(body), "clip.wav (audio/wav, 8 bytes) not sent", "a part the format cannot carry is named")
		})
	}
	t.Run("gemini-after-responses", func(t *testing.T) {
		_, contents, err := provider.GeminiContentsPlaced(history, provider.GeminiPartsAfterResponses)
		require.NoError(t, err)
		body := mustJSON(t, map[string]any{"contents": contents})
		checkGeminiSDK(t, body)
		golden(t, "parts_all_kinds_gemini_after_responses.json", field(t, body, "contents"))
	})
}

// Text-only results and messages encode exactly as before parts existed.
func TestTextOnlyRequestsUnchanged(t *testing.T) {
	res := llmtoolkit.Result{ToolCallID: "call_1", Name: "get_weather", Content: "sunny"}
	assert.JSONEq(t, `{"type":"tool_result","tool_use_id":"call_1","content":"sunny"}`, string(mustJSON(t, provider.AnthropicToolResult(res))))
	assert.JSONEq(t, `{"type":"function_call_output","call_id":"call_1","output":"sunny"}`, string(mustJSON(t, provider.OpenAIResponsesToolOutput(res))))
	assert.JSONEq(t, `{"role":"tool","content":"sunny","tool_call_id":"call_1"}`, string(mustJSON(t, provider.OpenAIToolMessage(res))))
	assert.JSONEq(t, `{"functionResponse":{"id":"call_1","name":"get_weather","response":{"output":"sunny"}}}`, string(mustJSON(t, provider.GeminiFunctionResponse(res))))
	assert.Len(t, provider.OpenAIToolMessages([]llmtoolkit.Result{res}), 1)
}
