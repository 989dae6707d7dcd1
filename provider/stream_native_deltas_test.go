package provider_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// nativeDeltaEvents reads the recorded stream whose native calls stream
// their payloads: two apply_patch_calls by diff deltas, a shell_call by
// command events.
func nativeDeltaEvents(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "openai_responses_native_deltas_stream.sse"))
	require.NoError(t, err)
	var events []string
	require.NoError(t, provider.ReadSSE(t.Context(), bytes.NewReader(data), func(_ string, d []byte) error {
		events = append(events, string(d))
		return nil
	}))
	require.Len(t, events, 23)
	return events
}

// feed adds events to a fresh accumulator and returns its answer.
func feed(t *testing.T, events []string) (agentloop.Response, error) {
	t.Helper()
	var s provider.OpenAIResponsesStream
	for _, e := range events {
		if err := s.Add([]byte(e)); err != nil {
			return agentloop.Response{}, err
		}
	}
	return s.Response()
}

// eventType is the "type" of an event's data.
func eventType(t *testing.T, e string) string {
	t.Helper()
	var v struct {
		Type string `json:"type"`
	}
	require.NoError(t, json.Unmarshal([]byte(e), &v))
	return v.Type
}

// without returns the events but those of the types named.
func without(t *testing.T, events []string, types ...string) []string {
	t.Helper()
	var out []string
	for _, e := range events {
		typ := eventType(t, e)
		drop := false
		for _, d := range types {
			drop = drop || typ == d
		}
		if !drop {
			out = append(out, e)
		}
	}
	return out
}

// malformed returns the reason a call is malformed, "" when it is not.
func malformed(c llmtoolkit.Call) string {
	if c.Malformed == nil {
		return ""
	}
	return c.Malformed.Reason
}

// TestOpenAIResponsesNativeDeltas: a recorded stream whose apply_patch
// calls come as diff deltas and whose shell call comes as command events
// reads as the unstreamed response; without its output_item.done events
// the patches come from the diffs' .done events (the deltas alone when
// .done's diff is the same), and the shell call, whose list only the
// item's done closes, is refused rather than run short.
func TestOpenAIResponsesNativeDeltas(t *testing.T) {
	events := nativeDeltaEvents(t)
	want, err := provider.OpenAIResponsesResponse(testdata(t, "openai_responses_native_deltas.json"))
	require.NoError(t, err)
	require.Len(t, want.ToolCalls, 3)
	for _, c := range want.ToolCalls {
		require.Nil(t, c.Malformed, c.ID)
	}
	got, err := feed(t, events)
	require.NoError(t, err)
	assertSameAnswer(t, want, got, func(m agentloop.Message) any {
		items, err := provider.OpenAIResponsesAssistantItems(m)
		require.NoError(t, err)
		return items
	})
	assert.Equal(t, "*** Begin Patch\n*** Update File: main.go\n@@ func main() {\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n }\n*** End Patch\n", got.ToolCalls[0].Arguments["patch"])
	assert.Equal(t, []any{"go build ./...", "go test ./..."}, got.ToolCalls[2].Arguments["commands"])

	cut := without(t, events, "response.output_item.done", "response.completed")
	got, err = feed(t, cut)
	require.NoError(t, err)
	require.Len(t, got.ToolCalls, 3)
	for i := range 2 {
		assert.Empty(t, malformed(got.ToolCalls[i]), "patch %d is whole by its diff's .done", i)
		assert.Equal(t, want.ToolCalls[i].Arguments, got.ToolCalls[i].Arguments)
	}
	assert.Contains(t, malformed(got.ToolCalls[2]), "2 of its commands came whole")
	assert.Contains(t, malformed(got.ToolCalls[2]), "none was run")
	assert.Equal(t, "call_shell", got.ToolCalls[2].ID)

	// The replayed shell_call carries the commands that came whole.
	items, err := provider.OpenAIResponsesAssistantItems(got.Message())
	require.NoError(t, err)
	assert.Contains(t, string(mustJSON(t, items)), `"commands":["go build ./...","go test ./..."]`)

	// No .done of the diffs either: the deltas alone never run.
	got, err = feed(t, without(t, cut, "response.apply_patch_call_operation_diff.done"))
	require.NoError(t, err)
	for i := range 2 {
		assert.Contains(t, malformed(got.ToolCalls[i]), "ended inside the apply_patch_call's diff", "patch %d", i)
	}
}

// TestOpenAIResponsesNativeDeltasCutAnywhere: the recorded stream cut
// after each of its events gives, for every call, either the call of the
// whole stream or a malformed call; never a patch or command list the
// model did not finish.
func TestOpenAIResponsesNativeDeltasCutAnywhere(t *testing.T) {
	events := nativeDeltaEvents(t)
	whole, err := feed(t, events)
	require.NoError(t, err)
	byID := map[string]llmtoolkit.Call{}
	for _, c := range whole.ToolCalls {
		byID[c.ID] = c
	}
	for n := 1; n <= len(events); n++ {
		got, err := feed(t, events[:n])
		require.NoError(t, err, "cut after %d events", n)
		for _, c := range got.ToolCalls {
			if c.Malformed != nil {
				assert.ErrorContains(t, fmt.Errorf("%s", c.Malformed.Reason), "the stream did not complete the call", "cut after %d events", n)
				continue
			}
			assert.Equal(t, byID[c.ID].Arguments, c.Arguments, "cut after %d events: %s runs short", n, c.ID)
		}
	}
}

// TestOpenAIResponsesNativeDeltasHostile: events out of order, for items
// never announced or announced under another id or kind, past the caps.
func TestOpenAIResponsesNativeDeltasHostile(t *testing.T) {
	added := `{"type":"response.output_item.added","output_index":0,"item":{"type":"apply_patch_call","id":"apc_1","call_id":"call_1","status":"in_progress","operation":{"type":"update_file","path":"a.txt","diff":""}}}`
	delta := func(id, d string) string {
		return fmt.Sprintf(`{"type":"response.apply_patch_call_operation_diff.delta","output_index":0,"item_id":%q,"delta":%q}`, id, d)
	}
	done := func(id, d string) string {
		return fmt.Sprintf(`{"type":"response.apply_patch_call_operation_diff.done","output_index":0,"item_id":%q,"diff":%q}`, id, d)
	}
	itemDone := `{"type":"response.output_item.done","output_index":0,"item":{"type":"apply_patch_call","id":"apc_1","call_id":"call_1","status":"completed","operation":{"type":"update_file","path":"a.txt","diff":"@@\n-a\n+b\n"}}}`
	shellAdded := `{"type":"response.output_item.added","output_index":1,"item":{"type":"shell_call","id":"sh_1","call_id":"call_2","status":"in_progress","action":{"commands":["ls"]}}}`
	const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n"

	tests := []struct {
		name   string
		events []string
		// patch is the call's patch, or reason the start of why it is
		// malformed.
		patch, reason string
		calls         int
	}{
		{"deltas before their item", []string{delta("apc_1", "@@\n-a\n"), done("apc_1", "@@\n-a\n+b\n"), added}, patch, "", 1},
		{"a delta for another item", []string{added, delta("apc_1", "@@\n-a\n"), delta("apc_9", "+rm -rf\n"), done("apc_1", "@@\n-a\n+b\n")}, "", `deltas for item "apc_9" came for item "apc_1"`, 1},
		{"deltas under one id, the item under another", []string{delta("apc_9", "@@\n-a\n+b\n"), done("apc_9", "@@\n-a\n+b\n"), added}, "", `deltas for item "apc_9" came for item "apc_1"`, 1},
		{"the item's done wins over bad deltas", []string{added, delta("apc_9", "junk"), itemDone}, patch, "", 1},
		{"shell events at a patch's index", []string{added, `{"type":"response.shell_call_command.done","output_index":0,"command_index":0,"command":"rm -rf ~"}`, done("apc_1", "@@\n-a\n+b\n")}, "", "shell_call deltas came for the apply_patch_call item", 1},
		{"patch deltas, then a shell item at that index", []string{done("", "@@\n-a\n+b\n"), strings.Replace(shellAdded, `"output_index":1`, `"output_index":0`, 1)}, "", "apply_patch_call deltas came for the shell_call item", 1},
		{"deltas for an index no item is at", []string{added, done("apc_1", "@@\n-a\n+b\n"), `{"type":"response.apply_patch_call_operation_diff.delta","output_index":7,"item_id":"apc_7","delta":"x"}`, `{"type":"response.shell_call_command.delta","output_index":8,"command_index":0,"delta":"x"}`}, patch, "", 1},
		{"a cut before any diff", []string{added}, "", "it ended before the apply_patch_call's diff came", 1},
		{"a command index out of range", []string{shellAdded, `{"type":"response.shell_call_command.added","output_index":1,"command_index":1000000000,"command":"x"}`}, "", "a shell_call_command event at output 1 names command 1000000000", 1},
		{"a negative command index", []string{shellAdded, `{"type":"response.shell_call_command.added","output_index":1,"command_index":-1,"command":"x"}`}, "", "names command -1", 1},
		{"a shell item listing its commands, no events", []string{shellAdded}, "", "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := feed(t, tc.events)
			require.NoError(t, err)
			require.Len(t, got.ToolCalls, tc.calls)
			c := got.ToolCalls[0]
			if tc.reason != "" {
				assert.Contains(t, malformed(c), tc.reason)
				assert.Empty(t, c.Arguments)
				return
			}
			require.Empty(t, malformed(c))
			if tc.patch != "" {
				assert.Equal(t, tc.patch, c.Arguments["patch"])
			}
		})
	}

	t.Run("an event past the cap is refused before it is decoded", func(t *testing.T) {
		var s provider.OpenAIResponsesStream
		huge := `{"type":"response.apply_patch_call_operation_diff.delta","output_index":0,"delta":"` + strings.Repeat("a", provider.MaxSSEEventBytes) + `"}`
		require.ErrorIs(t, s.Add([]byte(huge)), provider.ErrStreamTooLarge)
	})
	t.Run("deltas past the answer's cap", func(t *testing.T) {
		var s provider.OpenAIResponsesStream
		require.NoError(t, s.Add([]byte(added)))
		big := delta("apc_1", strings.Repeat("+x\n", (provider.MaxSSEEventBytes-200)/3))
		var err error
		for i := 0; i < 8 && err == nil; i++ {
			err = s.Add([]byte(big))
		}
		require.ErrorIs(t, err, provider.ErrStreamTooLarge)
	})
	t.Run("too many items", func(t *testing.T) {
		var s provider.OpenAIResponsesStream
		var err error
		for i := 0; i < 5000 && err == nil; i++ {
			err = s.Add(fmt.Appendf(nil, `{"type":"response.shell_call_command.delta","output_index":%d,"command_index":0,"delta":""}`, i))
		}
		require.ErrorIs(t, err, provider.ErrStreamTooLarge)
	})
}
