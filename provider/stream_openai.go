package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// OpenAIStream turns the chunks of a streamed chat completion ("stream":
// true) into the complete answer: text deltas joined, tool calls put
// together from their fragments by "index", the finish_reason, and the
// usage of the last chunk that has one (ask for it with "stream_options":
// {"include_usage": true}). Only the first choice is read. The zero value
// is ready to use; it is not safe for concurrent use.
type OpenAIStream struct {
	text   strings.Builder
	calls  map[int]*openAIStreamCall
	finish string
	usage  *agentloop.Usage
	model  string
	total  int
	chunks int
}

type openAIStreamCall struct {
	id, name string
	args     strings.Builder
}

type openAIChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *openAIChatUsage `json:"usage"`
	Model string           `json:"model"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Add reads one chunk: the data of one server-sent event. The final
// "[DONE]" is accepted and ignored. A chunk that reports an error is an
// error.
func (s *OpenAIStream) Add(chunk []byte) error {
	chunk = bytes.TrimSpace(chunk)
	if string(chunk) == "[DONE]" {
		return nil
	}
	var c openAIChunk
	if err := decode("OpenAI stream", chunk, &c); err != nil {
		return err
	}
	if c.Error != nil {
		return fmt.Errorf("%w: OpenAI stream: the API reported an error: %s", ErrInvalidPayload, c.Error.Message)
	}
	s.chunks++
	if c.Usage != nil {
		u := c.Usage.usage()
		s.usage = &u
	}
	if c.Model != "" {
		s.model = c.Model
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = *ch.FinishReason
		}
		for _, d := range []*string{ch.Delta.Content, ch.Delta.Refusal} {
			if d != nil {
				if err := growth("OpenAI stream", &s.total, len(*d)); err != nil {
					return err
				}
				s.text.WriteString(*d)
			}
		}
		for _, tc := range ch.Delta.ToolCalls {
			if s.calls == nil {
				s.calls = map[int]*openAIStreamCall{}
			}
			call := s.calls[tc.Index]
			if call == nil {
				call = &openAIStreamCall{}
				s.calls[tc.Index] = call
			}
			if tc.ID != "" {
				call.id = tc.ID
			}
			if tc.Function.Name != "" {
				call.name = tc.Function.Name
			}
			if err := growth("OpenAI stream", &s.total, len(tc.Function.Arguments)); err != nil {
				return err
			}
			call.args.WriteString(tc.Function.Arguments)
		}
	}
	return nil
}

// Response returns the answer put together so far, as [OpenAIResponse]
// would read the same completion unstreamed; a call whose arguments are
// not a JSON object is a [llmtoolkit.MalformedCall]. It is an error before
// any chunk, or for a call that never got a name.
func (s *OpenAIStream) Response() (agentloop.Response, error) {
	if s.chunks == 0 {
		return agentloop.Response{}, fmt.Errorf("%w: OpenAI stream: no chunk was read", ErrInvalidPayload)
	}
	out := agentloop.Response{Content: s.text.String(), StopReason: s.finish, Model: s.model}
	if s.usage != nil {
		out.Usage = *s.usage
	}
	for _, i := range slices.Sorted(maps.Keys(s.calls)) {
		c := s.calls[i]
		if c.name == "" {
			return agentloop.Response{}, fmt.Errorf("%w: OpenAI stream: tool call %d has no function name", ErrInvalidPayload, i)
		}
		out.ToolCalls = append(out.ToolCalls, llmtoolkit.ParseCallLenient(c.id, c.name, c.args.String()))
	}
	distinctCallIDs(out.ToolCalls, GeneratedCallIDPrefix)
	return out, nil
}

// isJSONObject reports whether raw is a JSON object.
func isJSONObject(raw []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
