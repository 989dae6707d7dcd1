package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// OpenAIResponsesStream turns the events of a streamed Responses API
// response ("stream": true) into the complete answer. Each output item is
// taken whole from response.output_item.done (a reasoning item with its
// final encrypted_content); an item that never got there is put together
// from response.output_item.added and its text or arguments deltas. The
// status and usage come from response.completed (or .incomplete). The zero
// value is ready to use; it is not safe for concurrent use.
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
}

type openAIResponsesEvent struct {
	Type        string               `json:"type"`
	OutputIndex int                  `json:"output_index"`
	Item        json.RawMessage      `json:"item"`
	Delta       string               `json:"delta"`
	Response    *openAIResponsesBody `json:"response"`
	Code        string               `json:"code"`
	Message     string               `json:"message"`
}

// Add reads one event: the data of one server-sent event (its "type" says
// which). Events this accumulator does not need are ignored; "error" and
// response.failed are errors.
func (s *OpenAIResponsesStream) Add(event []byte) error {
	var e openAIResponsesEvent
	if err := decode("OpenAI Responses stream", event, &e); err != nil {
		return err
	}
	s.events++
	item := func() *openAIStreamItem {
		if s.items == nil {
			s.items = map[int]*openAIStreamItem{}
		}
		it := s.items[e.OutputIndex]
		if it == nil {
			it = &openAIStreamItem{}
			s.items[e.OutputIndex] = it
		}
		return it
	}
	if err := growth("OpenAI Responses stream", &s.total, len(e.Delta)+len(e.Item)); err != nil {
		return err
	}
	if e.Response != nil && e.Response.Model != "" {
		s.model = e.Response.Model
	}
	switch e.Type {
	case "response.output_item.added":
		item().added = e.Item
	case "response.output_item.done":
		item().done = e.Item
	case "response.output_text.delta", "response.refusal.delta":
		item().text.WriteString(e.Delta)
	case "response.function_call_arguments.delta":
		item().args.WriteString(e.Delta)
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
	return nil
}

// Response returns the answer put together so far, as
// [OpenAIResponsesResponse] would read the same response unstreamed. It is
// an error before any event.
func (s *OpenAIResponsesStream) Response() (agentloop.Response, error) {
	if s.events == 0 {
		return agentloop.Response{}, fmt.Errorf("%w: OpenAI Responses stream: no event was read", ErrInvalidPayload)
	}
	raws := make([]json.RawMessage, 0, len(s.items))
	for _, i := range slices.Sorted(maps.Keys(s.items)) {
		it := s.items[i]
		switch {
		case it.done != nil:
			raws = append(raws, it.done)
		case it.added != nil:
			raws = append(raws, it.partial())
		}
	}
	turn, err := openAIResponsesItems(raws)
	if err != nil {
		return agentloop.Response{}, err
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

// partial builds an item that was added but never done from its deltas.
func (it *openAIStreamItem) partial() json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(it.added, &m) != nil || m == nil {
		return it.added
	}
	var typ string
	_ = json.Unmarshal(m["type"], &typ)
	switch typ {
	case "function_call":
		m["arguments"] = mustMarshal(it.args.String())
	case "message":
		m["content"] = mustMarshal([]map[string]any{{"type": "output_text", "text": it.text.String(), "annotations": []any{}}})
	}
	return mustMarshal(m)
}
