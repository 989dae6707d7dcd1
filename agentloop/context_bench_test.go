package agentloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// longHistory is a 1,000-message history: a prompt, then 499 turns of one
// call (with reasoning state) and its 200-byte result.
func longHistory(b *testing.B) []agentloop.Message {
	h := prompt()
	for k := 1; len(h) < 1000; k++ {
		c := readCall(k)
		c.ID = fmt.Sprintf("h%d", k)
		resp, err := signedTurn(k, []llmtoolkit.Call{c})
		if err != nil {
			b.Fatal(err)
		}
		h = append(h, resp.Message(), agentloop.Message{Role: agentloop.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: strings.Repeat("r", 200)})
	}
	return h[:1000]
}

// BenchmarkContextAccounting measures a turn of the loop over a
// 1,000-message history: 20 turns of one call to an instant tool
// (reported per turn: ns/turn), without a budget and with one large
// enough that nothing is cleared (the accounting alone: the first count of
// the 1,000 messages, then each turn's added messages), with an instant
// model (the loop's own overhead) and with one that writes the history in
// Anthropic's format, as a real SendFunc does each turn.
// BenchmarkAccountingTurn (in-package) times the accounting of one turn
// alone.
func BenchmarkContextAccounting(b *testing.B) {
	const turns = 20
	history := longHistory(b)
	fake := lt.NewFake(map[string]string{"read": "ok"})
	send := func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
		k := len(msgs) - len(history)
		if k >= 2*turns {
			return agentloop.Response{Content: "done"}, nil
		}
		return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: fmt.Sprintf("c%d", k), Name: "read", Arguments: map[string]any{"path": "a.go"}}},
			Usage: agentloop.Usage{InputTokens: 1000, ContextTokens: 90000}}, nil
	}
	// encoding is what a real SendFunc does each turn beside the network:
	// write the history in the provider's format.
	encoding := func(ctx context.Context, msgs []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
		system, am, err := provider.AnthropicMessages(msgs)
		if err != nil {
			return agentloop.Response{}, err
		}
		if _, err := json.Marshal(map[string]any{"system": system, "messages": am, "tools": provider.AnthropicTools(tools)}); err != nil {
			return agentloop.Response{}, err
		}
		return send(ctx, msgs, tools)
	}
	for _, model := range []string{"instant", "encoding"} {
		for _, budget := range []int{0, 10_000_000} {
			b.Run(model+"/"+map[bool]string{true: "off", false: "on"}[budget == 0], func(b *testing.B) {
				opts := agentloop.Options{Resolver: fake, Logger: quiet, MaxIterations: turns + 1, ContextBudget: budget}
				send := send
				if model == "encoding" {
					send = encoding
				}
				b.ReportAllocs()
				for b.Loop() {
					fake.Reset()
					if _, _, err := agentloop.Run(context.Background(), history, send, opts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(turns+1), "ns/turn")
			})
		}
	}
}
