package temporal

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// longModel reads the turn from the last result's call id and calls
// "read" until turn last, then answers; asked for a summary (offered no
// tools, the last message agentloop.SummaryPrompt), it writes one.
type longModel struct {
	mu        sync.Mutex
	summaries int
	last      int
}

func (m *longModel) send(_ context.Context, msgs []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
	if n := len(msgs); n > 0 && msgs[n-1].Content == agentloop.SummaryPrompt {
		m.mu.Lock()
		m.summaries++
		m.mu.Unlock()
		if len(tools) != 0 {
			return agentloop.Response{}, fmt.Errorf("asked for a summary with %d tools offered", len(tools))
		}
		return agentloop.Response{Content: fmt.Sprintf("the model's summary of %d messages", n-1)}, nil
	}
	k := 1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agentloop.RoleTool {
			n, err := strconv.Atoi(strings.TrimPrefix(msgs[i].ToolCallID, "c"))
			if err != nil {
				return agentloop.Response{}, err
			}
			k = n + 1
			break
		}
	}
	if k >= m.last {
		return agentloop.Response{Content: "done"}, nil
	}
	return agentloop.Response{Content: strings.Repeat("thinking ", 60),
		ToolCalls: []llmtoolkit.Call{{ID: "c" + strconv.Itoa(k), Name: "read", Arguments: map[string]any{}}}}, nil
}

// TestWorkflowCompacts: a run under a context budget clears and compacts
// in the workflow, each compaction a model activity of its own, summarized
// by the worker's summarizer, or by the model when the worker has none.
func TestWorkflowCompacts(t *testing.T) {
	for _, withSummarizer := range []bool{true, false} {
		t.Run(map[bool]string{true: "worker's summarizer", false: "the model summarizes"}[withSummarizer], func(t *testing.T) {
			model := &longModel{last: 16}
			resolver := llmtoolkittest.NewFake(map[string]string{"read": strings.Repeat("x", 3000)})
			var mu sync.Mutex
			spans := 0
			opts := agentloop.Options{Resolver: resolver}
			if withSummarizer {
				opts.ContextPolicy.Summarize = func(_ context.Context, span []agentloop.Message) (string, error) {
					mu.Lock()
					defer mu.Unlock()
					spans++
					for _, m := range span {
						if m.Content == agentloop.SummaryPrompt {
							return "", fmt.Errorf("the span holds the summary prompt")
						}
					}
					return fmt.Sprintf("the worker's summary of %d messages", len(span)), nil
				}
			}
			env := newEnv(t, &Activities{Send: model.send, Options: opts})
			env.ExecuteWorkflow(WorkflowName, RunInput{Messages: []agentloop.Message{agentloop.UserMessage("go")}, MaxIterations: 20,
				ContextBudget: 4000, KeepToolResults: 2, KeepRecent: 1200, Compact: true})
			out := runOutput(t, env)
			require.NoError(t, out.Error())
			assert.Equal(t, "done", out.Response.Content)
			require.True(t, strings.HasPrefix(out.History[1].Content, agentloop.SummaryHeader), out.History[1].Content)
			if withSummarizer {
				assert.Positive(t, spans)
				assert.Zero(t, model.summaries)
				assert.Contains(t, out.History[1].Content, "the worker's summary")
			} else {
				assert.Positive(t, model.summaries)
				assert.Contains(t, out.History[1].Content, "the model's summary")
			}
		})
	}
}
