package agentloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// imager attaches one image of size bytes per call (the call's id in its
// first byte).
type imager struct{ size int }

func (im imager) Tools() []llmtoolkit.Tool {
	return []llmtoolkit.Tool{llmtoolkit.MustTool("read", "Reads an image.", nil)}
}

func (im imager) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	llmtoolkit.Attach(ctx, llmtoolkit.ImagePart("image/png", []byte(strings.Repeat(call.ID[:1], im.size))))
	return "img " + call.ID, nil
}

// Parts count in MaxTurnResultBytes: a part that does not fit is dropped
// whole with a note, never cut; the ones that fit reach the tool messages.
func TestTurnBudgetCountsParts(t *testing.T) {
	cases := []struct {
		name     string
		size     int
		calls    int
		budget   int
		kept     []int // parts kept per call
		dropNote []bool
	}{
		{"all fit", 100, 3, 1000, []int{1, 1, 1}, []bool{false, false, false}},
		{"the third does not fit", 400, 3, 1000, []int{1, 1, 0}, []bool{false, false, true}},
		{"one part over the whole budget", 2000, 1, 1000, []int{0}, []bool{true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, history, err := agentloop.Run(context.Background(), []agentloop.Message{agentloop.UserMessage("look")},
				manyCalls(tc.calls), agentloop.Options{Resolver: imager{size: tc.size}, MaxTurnResultBytes: tc.budget})
			require.NoError(t, err)
			var tools []agentloop.Message
			for _, m := range history {
				if m.Role == agentloop.RoleTool {
					tools = append(tools, m)
				}
			}
			require.Len(t, tools, tc.calls)
			for i, m := range tools {
				assert.Len(t, m.Parts, tc.kept[i], "call %d", i)
				for _, p := range m.Parts {
					assert.Len(t, p.Data, tc.size, "a part is never cut")
				}
				assert.Equal(t, tc.dropNote[i], strings.Contains(m.Content, "not sent: one turn keeps at most"), "call %d: %q", i, m.Content)
				if tc.dropNote[i] {
					assert.Contains(t, m.Content, fmt.Sprintf("image (image/png, %d bytes) not sent", tc.size))
				}
			}
		})
	}
}

// ToolOutcome keeps the parts through its JSON form.
func TestToolOutcomeCarriesParts(t *testing.T) {
	res := llmtoolkit.Result{ToolCallID: "c", Name: "read", Content: "x",
		Parts: []llmtoolkit.Part{llmtoolkit.ImagePart("image/png", []byte{0, 1, 2, 255}), llmtoolkit.FilePart("a.pdf", "application/pdf", []byte("%PDF"))}}
	b, err := json.Marshal(agentloop.EncodeResult(res))
	require.NoError(t, err)
	var o agentloop.ToolOutcome
	require.NoError(t, json.Unmarshal(b, &o))
	assert.Equal(t, res.Parts, o.Result().Parts)

	text := llmtoolkit.Result{ToolCallID: "c", Name: "read", Content: "x"}
	b, err = json.Marshal(agentloop.EncodeResult(text))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "parts", "a text-only outcome is stored as before")
}

func TestMessageJSONTextOnlyUnchanged(t *testing.T) {
	b, err := json.Marshal(agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: "c", Name: "n", Content: "x"}))
	require.NoError(t, err)
	assert.Equal(t, `{"role":"tool","content":"x","tool_call_id":"c","tool_name":"n"}`, string(b))
	m := agentloop.UserMessageWithParts("see", llmtoolkit.ImageURLPart("image/png", "https://e.x/a.png"))
	b, err = json.Marshal(m)
	require.NoError(t, err)
	assert.Equal(t, `{"role":"user","content":"see","parts":[{"kind":"image","media_type":"image/png","url":"https://e.x/a.png"}]}`, string(b))
}
