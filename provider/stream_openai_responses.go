package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// OpenAIResponsesStream turns the events of a streamed Responses API
// response ("stream": true) into the complete answer. Each output item is
// taken whole from response.output_item.done (a reasoning item with its
// final encrypted_content); an item that never got there is put together
// from response.output_item.added and its text or arguments deltas. The
// status and usage come from response.completed (or .incomplete). The zero
// value is ready to use; it is not safe for concurrent use.
//
// The native calls stream their payloads too: an apply_patch_call's diff
// in response.apply_patch_call_operation_diff.delta events (the whole diff
// in .done), a shell_call's commands in response.shell_call_command.added,
// .delta and .done events (by command_index). A native call whose item
// never got to output_item.done is run only when its payload is known
// whole: an apply_patch_call whose diff's .done came (or whose added item
// carried it, or a delete_file), a shell_call whose added item listed its
// commands. Anything else gives a [llmtoolkit.MalformedCall] saying why,
// answered as failed, never a shortened patch or command list: a diff cut
// inside or before it, a shell_call's command events without the item's
// done (only that says no command follows), deltas naming another item
// than the one announced at their output index or of another kind.
// Deltas may come before their item is announced; deltas at an output
// index no item was ever announced at have no call to go to and are left
// out. Every event is checked against
// [MaxSSEEventBytes] before it is decoded, the answer against the
// accumulator's cap, the items and a call's commands are counted.
type OpenAIResponsesStream struct {
	items  map[int]*openAIStreamItem
	final  *openAIResponsesBody
	model  string // of any event's response (response.created names it first)
	events int
	total  int
}

type openAIStreamItem struct {
	added json.RawMessage
	done  json.RawMessage
	text  strings.Builder
	args  strings.Builder

	// id is the item's id, from its added event or its first delta; kind
	// is the native call kind its deltas are of.
	id, kind string
	// diff holds an apply_patch_call's diff deltas, diffDone the whole
	// diff of its .done event.
	diff       strings.Builder
	diffDeltas bool
	diffDone   *string
	// commands holds a shell_call's commands by command_index.
	commands map[int]*openAIStreamCommand
	// conflict says why the item's deltas cannot be trusted.
	conflict string
}

// openAIStreamCommand is one command of a streamed shell_call.
type openAIStreamCommand struct {
	text strings.Builder
	done *string
}

// Bounds on a stream's shape, beside its bytes.
const (
	// maxStreamItems caps the output items of one streamed response.
	maxStreamItems = 4096
	// maxStreamCommands caps the commands of one streamed shell_call.
	maxStreamCommands = 1024
)

type openAIResponsesEvent struct {
	Type         string               `json:"type"`
	OutputIndex  int                  `json:"output_index"`
	ItemID       string               `json:"item_id"`
	Item         json.RawMessage      `json:"item"`
	Delta        string               `json:"delta"`
	Diff         *string              `json:"diff"`
	Command      *string              `json:"command"`
	CommandIndex int                  `json:"command_index"`
	Response     *openAIResponsesBody `json:"response"`
	Code         string               `json:"code"`
	Message      string               `json:"message"`
}

// Add reads one event: the data of one server-sent event (its "type" says
// which). Events this accumulator does not need are ignored; "error" and
// response.failed are errors.
func (s *OpenAIResponsesStream) Add(event []byte) error {
	if len(event) > MaxSSEEventBytes {
		return fmt.Errorf("%w: OpenAI Responses stream: an event of %d bytes passes %d", ErrStreamTooLarge, len(event), MaxSSEEventBytes)
	}
	var e openAIResponsesEvent
	if err := decode("OpenAI Responses stream", event, &e); err != nil {
		return err
	}
	s.events++
	var full error
	item := func() *openAIStreamItem {
		if s.items == nil {
			s.items = map[int]*openAIStreamItem{}
		}
		it := s.items[e.OutputIndex]
		if it == nil {
			if len(s.items) >= maxStreamItems {
				full = fmt.Errorf("%w: OpenAI Responses stream: more than %d output items", ErrStreamTooLarge, maxStreamItems)
				return &openAIStreamItem{}
			}
			it = &openAIStreamItem{}
			s.items[e.OutputIndex] = it
		}
		return it
	}
	n := len(e.Delta) + len(e.Item)
	if e.Diff != nil {
		n += len(*e.Diff)
	}
	if e.Command != nil {
		n += len(*e.Command)
	}
	if err := growth("OpenAI Responses stream", &s.total, n); err != nil {
		return err
	}
	if e.Response != nil && e.Response.Model != "" {
		s.model = e.Response.Model
	}
	switch e.Type {
	case "response.output_item.added":
		it := item()
		it.added = e.Item
		it.announce(e.OutputIndex)
	case "response.output_item.done":
		item().done = e.Item
	case "response.output_text.delta", "response.refusal.delta":
		item().text.WriteString(e.Delta)
	case "response.function_call_arguments.delta":
		item().args.WriteString(e.Delta)
	case "response.apply_patch_call_operation_diff.delta":
		it := item()
		if it.deltaOf(itemApplyPatchCall, e.ItemID, e.OutputIndex) {
			it.diffDeltas = true
			it.diff.WriteString(e.Delta)
		}
	case "response.apply_patch_call_operation_diff.done":
		if it := item(); it.deltaOf(itemApplyPatchCall, e.ItemID, e.OutputIndex) && e.Diff != nil {
			d := *e.Diff
			it.diffDone = &d
		}
	case "response.shell_call_command.added", "response.shell_call_command.delta", "response.shell_call_command.done":
		it := item()
		if !it.deltaOf(itemShellCall, e.ItemID, e.OutputIndex) {
			break
		}
		if e.CommandIndex < 0 || e.CommandIndex >= maxStreamCommands {
			it.conflictf("a shell_call_command event at output %d names command %d (0 to %d are taken)", e.OutputIndex, e.CommandIndex, maxStreamCommands-1)
			break
		}
		if it.commands == nil {
			it.commands = map[int]*openAIStreamCommand{}
		}
		c := it.commands[e.CommandIndex]
		if c == nil {
			c = &openAIStreamCommand{}
			it.commands[e.CommandIndex] = c
		}
		switch {
		case e.Type == "response.shell_call_command.done" && e.Command != nil:
			done := *e.Command
			c.done = &done
		case e.Type == "response.shell_call_command.added" && e.Command != nil:
			c.text.WriteString(*e.Command)
		default:
			c.text.WriteString(e.Delta)
		}
	case "response.completed", "response.incomplete":
		s.final = e.Response
	case "response.failed":
		msg := "no message"
		if e.Response != nil && e.Response.Error != nil {
			msg = e.Response.Error.Message
		}
		return fmt.Errorf("%w: OpenAI Responses stream: the response failed: %s", ErrInvalidPayload, msg)
	case "error":
		return fmt.Errorf("%w: OpenAI Responses stream: the API reported an error: %s (%s)", ErrInvalidPayload, e.Message, e.Code)
	}
	return full
}

// announce checks the item added at index against the deltas that came
// before it.
func (it *openAIStreamItem) announce(index int) {
	var head struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	_ = json.Unmarshal(it.added, &head)
	if it.kind != "" && head.Type != it.kind {
		it.conflictf("%s deltas came for the %s item at output %d", it.kind, head.Type, index)
	}
	if it.id != "" && head.ID != "" && head.ID != it.id {
		it.conflictf("deltas for item %q came for item %q at output %d", it.id, head.ID, index)
	}
	if head.ID != "" {
		it.id = head.ID
	}
}

// deltaOf records a delta of a native call of kind for the item id, and
// reports whether it can be taken: a delta for another item or of another
// kind than the one at its output index is not.
func (it *openAIStreamItem) deltaOf(kind, id string, index int) bool {
	if it.added != nil {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(it.added, &head)
		if head.Type != kind {
			it.conflictf("%s deltas came for the %s item at output %d", kind, head.Type, index)
			return false
		}
	}
	if it.kind != "" && it.kind != kind {
		it.conflictf("%s and %s deltas came for output %d", it.kind, kind, index)
		return false
	}
	it.kind = kind
	if id != "" {
		if it.id != "" && it.id != id {
			it.conflictf("deltas for item %q came for item %q at output %d", id, it.id, index)
			return false
		}
		it.id = id
	}
	return true
}

func (it *openAIStreamItem) conflictf(format string, args ...any) {
	if it.conflict == "" {
		it.conflict = fmt.Sprintf(format, args...)
	}
}

// Response returns the answer put together so far, as
// [OpenAIResponsesResponse] would read the same response unstreamed. It is
// an error before any event.
func (s *OpenAIResponsesStream) Response() (agentloop.Response, error) {
	if s.events == 0 {
		return agentloop.Response{}, fmt.Errorf("%w: OpenAI Responses stream: no event was read", ErrInvalidPayload)
	}
	raws := make([]json.RawMessage, 0, len(s.items))
	// cut holds, per call in order, why a native call cannot be run, and
	// its payload as it came.
	type cutCall struct {
		why error
		raw json.RawMessage
	}
	var cut []cutCall
	for _, i := range slices.Sorted(maps.Keys(s.items)) {
		it := s.items[i]
		raw := it.done
		var why error
		if raw == nil {
			if it.added == nil {
				continue
			}
			raw, why = it.partial()
		}
		raws = append(raws, raw)
		var head openAIResponsesItemIn
		_ = json.Unmarshal(raw, &head)
		switch head.Type {
		case "function_call", itemApplyPatchCall, itemShellCall:
			payload := head.Operation
			if head.Type == itemShellCall {
				payload = head.Action
			}
			cut = append(cut, cutCall{why, payload})
		}
	}
	turn, err := openAIResponsesItems(raws)
	if err != nil {
		return agentloop.Response{}, err
	}
	for k, cc := range cut {
		if cc.why == nil || k >= len(turn.calls) {
			continue
		}
		c := &turn.calls[k]
		m := llmtoolkit.MalformedCall(c.ID, c.Name, string(cc.raw), cc.why)
		c.Arguments, c.Malformed = m.Arguments, m.Malformed
	}
	out := agentloop.Response{Content: turn.text, ToolCalls: turn.calls, Provider: turn.state, Model: s.model}
	if f := s.final; f != nil {
		out.StopReason = f.Status
		if f.IncompleteDetails != nil && f.IncompleteDetails.Reason != "" {
			out.StopReason = f.IncompleteDetails.Reason
		}
		if f.Usage != nil {
			out.Usage = f.Usage.usage()
		}
	}
	return out, nil
}

// errStreamCut is wrapped by the reasons a native call from a cut or
// inconsistent stream is not run.
var errStreamCut = errors.New("the stream did not complete the call")

// partial builds an item that was added but never done from its deltas,
// with the reason a native call among them cannot be run.
func (it *openAIStreamItem) partial() (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(it.added, &m) != nil || m == nil {
		return it.added, nil
	}
	var typ string
	_ = json.Unmarshal(m["type"], &typ)
	var why error
	switch typ {
	case "function_call":
		m["arguments"] = mustMarshal(it.args.String())
	case "message":
		m["content"] = mustMarshal([]map[string]any{{"type": "output_text", "text": it.text.String(), "annotations": []any{}}})
	case itemApplyPatchCall:
		var op map[string]json.RawMessage
		_ = json.Unmarshal(m["operation"], &op)
		var opType, diff string
		_ = json.Unmarshal(op["type"], &opType)
		_ = json.Unmarshal(op["diff"], &diff)
		switch {
		case it.conflict != "":
			why = fmt.Errorf("%w: %s", errStreamCut, it.conflict)
		case it.diffDone != nil:
			if op == nil {
				op = map[string]json.RawMessage{}
			}
			op["diff"] = mustMarshal(*it.diffDone)
		case it.diffDeltas:
			why = fmt.Errorf("%w: it ended inside the apply_patch_call's diff, after %d bytes of it", errStreamCut, it.diff.Len())
			if op != nil {
				op["diff"] = mustMarshal(it.diff.String())
			}
		case diff == "" && opType != "delete_file":
			why = fmt.Errorf("%w: it ended before the apply_patch_call's diff came", errStreamCut)
		}
		if op != nil {
			m["operation"] = mustMarshal(op)
		}
	case itemShellCall:
		var action map[string]json.RawMessage
		_ = json.Unmarshal(m["action"], &action)
		var listed []string
		_ = json.Unmarshal(action["commands"], &listed)
		switch {
		case it.conflict != "":
			why = fmt.Errorf("%w: %s", errStreamCut, it.conflict)
		case len(it.commands) > 0:
			// Only output_item.done says that no command follows.
			var whole []string
			for i := 0; i < maxStreamCommands; i++ {
				c := it.commands[i]
				if c == nil || c.done == nil {
					break
				}
				whole = append(whole, *c.done)
			}
			why = fmt.Errorf("%w: it ended before the shell_call was done (%d of its commands came whole, %d were started); none was run", errStreamCut, len(whole), len(it.commands))
			if action == nil {
				action = map[string]json.RawMessage{}
			}
			action["commands"] = mustMarshal(whole)
			m["action"] = mustMarshal(action)
		case len(listed) == 0:
			why = fmt.Errorf("%w: it ended before the shell_call's commands came", errStreamCut)
		}
	}
	return mustMarshal(m), why
}
