package provider

import (
	"encoding/json"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// GeminiStream turns the chunks of a streamed generateContent response
// (streamGenerateContent?alt=sse) into the complete answer: the first
// candidate's parts in order, with consecutive text parts of the same kind
// joined, the last finishReason and the last usage. A part that carries a
// thoughtSignature (in a stream it may come on an empty text part at the
// end) is never joined with another, so every signature goes back on its
// own part. The zero value is ready to use; it is not safe for concurrent
// use.
type GeminiStream struct {
	parts  []map[string]json.RawMessage
	finish string
	usage  *agentloop.Usage
	model  string
	chunks int
	total  int
}

// Add reads one chunk: the data of one server-sent event, a
// GenerateContentResponse. A chunk that reports an error or a blocked
// prompt is an error.
func (s *GeminiStream) Add(chunk []byte) error {
	var c struct {
		geminiResponse
		Error *struct {
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if err := decode("Gemini stream", chunk, &c); err != nil {
		return err
	}
	if c.Error != nil {
		return fmt.Errorf("%w: Gemini stream: the API reported an error: %s (%s)", ErrInvalidPayload, c.Error.Message, c.Error.Status)
	}
	if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" {
		return fmt.Errorf("%w: Gemini stream: the prompt was blocked (blockReason %s)", ErrInvalidPayload, c.PromptFeedback.BlockReason)
	}
	s.chunks++
	if u := c.UsageMetadata; u != nil {
		v := u.usage()
		s.usage = &v
	}
	if c.ModelVersion != "" {
		s.model = c.ModelVersion
	}
	if len(c.Candidates) == 0 {
		return nil
	}
	cand := c.Candidates[0]
	if cand.FinishReason != "" {
		s.finish = cand.FinishReason
	}
	var content struct {
		Parts []map[string]json.RawMessage `json:"parts"`
	}
	if len(cand.Content) > 0 {
		if err := decode("Gemini stream", cand.Content, &content); err != nil {
			return err
		}
	}
	for _, p := range content.Parts {
		if err := growth("Gemini stream", &s.total, len(p["text"])+len(p["functionCall"])+len(p["thoughtSignature"])); err != nil {
			return err
		}
		if n := len(s.parts); n > 0 && joinable(s.parts[n-1], p) {
			var a, b string
			_ = json.Unmarshal(s.parts[n-1]["text"], &a)
			_ = json.Unmarshal(p["text"], &b)
			s.parts[n-1]["text"] = mustMarshal(a + b)
			continue
		}
		s.parts = append(s.parts, p)
	}
	return nil
}

// joinable reports whether text part b continues text part a: both hold
// only text (and the same thought flag), and neither carries a signature.
func joinable(a, b map[string]json.RawMessage) bool {
	textOnly := func(p map[string]json.RawMessage) bool {
		for k := range p {
			if k != "text" && k != "thought" {
				return false
			}
		}
		_, ok := p["text"]
		return ok
	}
	return textOnly(a) && textOnly(b) && string(a["thought"]) == string(b["thought"])
}

// Response returns the answer put together so far, as [GeminiResponse]
// would read the same answer unstreamed. It is an error before any chunk.
func (s *GeminiStream) Response() (agentloop.Response, error) {
	if s.chunks == 0 {
		return agentloop.Response{}, fmt.Errorf("%w: Gemini stream: no chunk was read", ErrInvalidPayload)
	}
	raws := make([]json.RawMessage, len(s.parts))
	for i, p := range s.parts {
		raws[i] = mustMarshal(p)
	}
	turn, err := geminiParts(raws)
	if err != nil {
		return agentloop.Response{}, err
	}
	out := agentloop.Response{Content: turn.text, ToolCalls: turn.calls, StopReason: s.finish, Provider: turn.state, Model: s.model}
	if s.usage != nil {
		out.Usage = *s.usage
	}
	return out, nil
}
