package agentloop

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
)

// BenchmarkAccountingTurn measures the accounting of one turn on a
// 1,000-message history: note the tools offered, count the turn's two
// new messages (an assistant message whose call has arguments and
// reasoning state of three formats, and a tool result), note the send
// and read the answer's count.
func BenchmarkAccountingTurn(b *testing.B) {
	state := llmtoolkit.ProviderState{
		"anthropic":        []byte(`{"content":[{"type":"thinking","thinking":"` + strings.Repeat("t", 1000) + `","signature":"` + strings.Repeat("s", 300) + `"}]}`),
		"gemini":           []byte(`{"parts":[{"text":"` + strings.Repeat("t", 1000) + `","thought":true}]}`),
		"openai-responses": []byte(`{"output":[{"type":"reasoning","encrypted_content":"` + strings.Repeat("e", 1000) + `"}]}`),
	}
	msg := func(k int) (Message, Message) {
		c := llmtoolkit.Call{ID: fmt.Sprintf("c%d", k), Name: "read_file", Arguments: map[string]any{"path": "pkg/a.go", "offset": 1.0, "limit": 200.0}}
		return Message{Role: RoleAssistant, ToolCalls: []llmtoolkit.Call{c}, Provider: state},
			Message{Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: strings.Repeat("r", 2000)}
	}
	history := make([]Message, 0, 1002)
	for k := 0; len(history) < 1000; k++ {
		a, t := msg(k)
		history = append(history, a, t)
	}
	tools := []llmtoolkit.Tool{{Name: "read_file", Description: "Read a file.", Parameters: map[string]any{"type": "object"}}}
	var a accounting
	a.offer(tools)
	a.tokens(history)
	base := a
	pairs := make([][2]Message, 64)
	for i := range pairs {
		x, y := msg(i)
		pairs[i] = [2]Message{x, y}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := pairs[i%len(pairs)]
		a.est, a.counted = base.est, base.counted // the 1,000 messages counted; the turn adds two
		history = append(history[:1000], p[0], p[1])
		a.offer(tools)
		_ = a.tokens(history)
		a.sent()
		a.observe(Usage{InputTokens: 10, ContextTokens: 50000})
		i++
	}
}
