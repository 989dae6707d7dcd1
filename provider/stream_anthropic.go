package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// AnthropicStream turns the events of a streamed Messages response
// ("stream": true) into the complete answer: each content block put
// together from its content_block_start and deltas (text_delta,
// input_json_delta, thinking_delta, signature_delta), the stop_reason of
// message_delta, and the usage of message_start and message_delta. Thinking
// blocks keep their signatures, so the answer replays like an unstreamed
// one. The zero value is ready to use; it is not safe for concurrent use.
type AnthropicStream struct {
	started bool
	blocks  map[int]*anthropicStreamBlock
	stop    string
	usage   agentloop.Usage
	model   string
	total   int
}

type anthropicStreamBlock struct {
	start     map[string]json.RawMessage // the content_block of content_block_start
	text      strings.Builder
	input     strings.Builder
	thinking  strings.Builder
	signature strings.Builder
	citations []json.RawMessage
}

type anthropicEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage *anthropicUsage `json:"usage"`
		Model string          `json:"model"`
	} `json:"message"`
	ContentBlock map[string]json.RawMessage `json:"content_block"`
	Delta        *struct {
		Type        string          `json:"type"`
		Text        string          `json:"text"`
		PartialJSON string          `json:"partial_json"`
		Thinking    string          `json:"thinking"`
		Signature   string          `json:"signature"`
		Citation    json.RawMessage `json:"citation"`
		StopReason  string          `json:"stop_reason"`
	} `json:"delta"`
	Usage *struct {
		InputTokens              *int `json:"input_tokens"`
		OutputTokens             int  `json:"output_tokens"`
		CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// Add reads one event: the data of one server-sent event (its "type" says
// which). ping and unknown events are ignored; an error event is an error.
func (s *AnthropicStream) Add(event []byte) error {
	var e anthropicEvent
	if err := decode("Anthropic stream", event, &e); err != nil {
		return err
	}
	switch e.Type {
	case "message_start":
		s.started = true
		if e.Message != nil && e.Message.Usage != nil {
			s.usage = e.Message.Usage.usage()
		}
		if e.Message != nil {
			s.model = e.Message.Model
		}
	case "content_block_start":
		if e.ContentBlock == nil {
			return fmt.Errorf("%w: Anthropic stream: content_block_start %d has no content_block", ErrInvalidPayload, e.Index)
		}
		if s.blocks == nil {
			s.blocks = map[int]*anthropicStreamBlock{}
		}
		s.blocks[e.Index] = &anthropicStreamBlock{start: e.ContentBlock}
	case "content_block_delta":
		b := s.blocks[e.Index]
		if b == nil || e.Delta == nil {
			return fmt.Errorf("%w: Anthropic stream: content_block_delta for block %d, which has not started", ErrInvalidPayload, e.Index)
		}
		d := e.Delta
		if err := growth("Anthropic stream", &s.total, len(d.Text)+len(d.PartialJSON)+len(d.Thinking)+len(d.Signature)+len(d.Citation)); err != nil {
			return err
		}
		switch d.Type {
		case "text_delta":
			b.text.WriteString(d.Text)
		case "input_json_delta":
			b.input.WriteString(d.PartialJSON)
		case "thinking_delta":
			b.thinking.WriteString(d.Thinking)
		case "signature_delta":
			b.signature.WriteString(d.Signature)
		case "citations_delta":
			b.citations = append(b.citations, d.Citation)
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			s.stop = e.Delta.StopReason
		}
		if e.Usage != nil {
			s.usage.OutputTokens = e.Usage.OutputTokens
			u := e.Usage
			if u.InputTokens != nil || u.CacheCreationInputTokens != nil || u.CacheReadInputTokens != nil {
				// The final counts, when message_delta has them: the
				// prompt is what message_start said, less what changed.
				old := s.usage
				cached := old.ContextTokens - old.InputTokens
				if u.InputTokens != nil {
					s.usage.InputTokens = *u.InputTokens
				}
				if u.CacheCreationInputTokens != nil || u.CacheReadInputTokens != nil {
					cached = deref(u.CacheCreationInputTokens) + deref(u.CacheReadInputTokens)
					s.usage.CacheWriteTokens, s.usage.CacheReadTokens = deref(u.CacheCreationInputTokens), deref(u.CacheReadInputTokens)
				}
				s.usage.ContextTokens = s.usage.InputTokens + cached
			}
		}
	case "error":
		msg := "no message"
		if e.Error != nil {
			msg = e.Error.Type + ": " + e.Error.Message
		}
		return fmt.Errorf("%w: Anthropic stream: the API reported an error: %s", ErrInvalidPayload, msg)
	}
	return nil
}

// Response returns the answer put together so far, as [AnthropicResponse]
// would read the same message unstreamed. A tool_use whose streamed input
// is not a JSON object gives a [llmtoolkit.MalformedCall]. It is an error
// before message_start.
func (s *AnthropicStream) Response() (agentloop.Response, error) {
	if !s.started {
		return agentloop.Response{}, fmt.Errorf("%w: Anthropic stream: no message_start was read", ErrInvalidPayload)
	}
	raws := make([]json.RawMessage, 0, len(s.blocks))
	var broken map[string]string // tool_use id -> raw input that did not parse
	for _, i := range slices.Sorted(maps.Keys(s.blocks)) {
		b := s.blocks[i]
		blk := maps.Clone(b.start)
		var typ string
		_ = json.Unmarshal(blk["type"], &typ)
		switch typ {
		case "text":
			blk["text"] = mustMarshal(b.text.String())
			if len(b.citations) > 0 {
				blk["citations"] = mustMarshal(b.citations)
			}
		case "tool_use", "server_tool_use":
			if in := strings.TrimSpace(b.input.String()); in != "" {
				if isJSONObject([]byte(in)) {
					blk["input"] = json.RawMessage(in)
				} else {
					blk["input"] = json.RawMessage(`{}`)
					if broken == nil {
						broken = map[string]string{}
					}
					var id string
					_ = json.Unmarshal(blk["id"], &id)
					broken[id] = in
				}
			}
		case "thinking":
			blk["thinking"] = mustMarshal(b.thinking.String())
			blk["signature"] = mustMarshal(b.signature.String())
		}
		raws = append(raws, mustMarshal(blk))
	}
	turn, err := anthropicBlocks(raws)
	if err != nil {
		return agentloop.Response{}, err
	}
	for i, c := range turn.calls {
		if raw, ok := broken[c.ID]; ok {
			turn.calls[i] = malformedObjectCall("Anthropic", c.ID, c.Name, raw)
		}
	}
	distinctCallIDs(turn.calls, GeneratedCallIDPrefix)
	return agentloop.Response{Content: turn.text, ToolCalls: turn.calls, StopReason: s.stop, Usage: s.usage, Provider: turn.state, Model: s.model}, nil
}

// mustMarshal encodes v, which is built from decoded JSON and strings and
// so always encodes.
func mustMarshal(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("provider: encoding decoded JSON: %v", err))
	}
	return data
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
