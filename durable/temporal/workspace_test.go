package temporal

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// TestSubAgentRetryFindsItsWorkspace: a spawn_agent activity whose worker
// dies while its sub-agent works in a copy (first.txt written there, a
// call hanging; the worker's memory abandoned, nothing cleaned up) is
// retried on a new worker, with Workspaces of its own on the same folder:
// the retry's sub-agent works in the same copy, finds first.txt, and its
// changes of both attempts are applied to the parent's tree.
func TestSubAgentRetryFindsItsWorkspace(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tree")
	require.NoError(t, os.MkdirAll(root, 0o755))
	dir := filepath.Join(t.TempDir(), "workspaces")
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })

	var mu sync.Mutex
	var roots []string
	var found []string
	newSpawn := func(worker string) llmtoolkit.Resolver {
		ws, err := agent.NewWorkspaces(t.Context(), agent.WorkspaceConfig{Root: root, Dir: dir,
			Tools: func(_ context.Context, w agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
				mu.Lock()
				roots = append(roots, w.Root)
				mu.Unlock()
				code, err := codetools.New(w.Root)
				if err != nil {
					return nil, nil, err
				}
				block := llmtoolkit.MustTool("block", "blocks", map[string]any{"type": "object"})
				blocker := llmtoolkit.Indexed(llmtoolkit.ResolverFunc(func(context.Context, llmtoolkit.Call) (string, error) {
					<-hang // the dead worker's call never returns
					return "", fmt.Errorf("abandoned")
				}), []llmtoolkit.Tool{block})
				files := llmtoolkit.Filter(code, func(t llmtoolkit.Tool) bool { return t.Commands == nil })
				return llmtoolkit.Compose(files, blocker), code, nil
			},
			Decide: func(context.Context, agent.WorkspaceResult) agent.WorkspaceAction { return agent.ActionApply },
		})
		require.NoError(t, err)
		if worker == "after" {
			t.Cleanup(func() { require.NoError(t, ws.Close()) })
		}
		sub := func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			turns := 0
			for _, m := range msgs {
				if m.Role == agentloop.RoleAssistant {
					turns++
				}
			}
			last := msgs[len(msgs)-1]
			write := func(path, content string) agentloop.Response {
				return agentloop.Response{ToolCalls: []llmtoolkit.Call{llmtoolkittest.Call("write_file", map[string]any{"path": path, "content": content})}}
			}
			switch turns {
			case 0:
				return agentloop.Response{ToolCalls: []llmtoolkit.Call{llmtoolkittest.Call("read_file", map[string]any{"path": "first.txt"})}}, nil
			case 1:
				if last.IsError {
					return write("first.txt", "from the first attempt\n"), nil
				}
				mu.Lock()
				found = append(found, last.Content)
				mu.Unlock()
				return write("second.txt", "from the retry\n"), nil
			case 2:
				if worker == "before" {
					return agentloop.Response{ToolCalls: []llmtoolkit.Call{llmtoolkittest.Call("block", map[string]any{})}}, nil
				}
			}
			return agentloop.Response{Content: "finished"}, nil
		}
		spawn, err := agent.SpawnAgent(agent.SubAgentConfig{Model: sub, Workspaces: ws, Isolation: agent.IsolationCopy, AllowMutating: true, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
		require.NoError(t, err)
		return spawn
	}
	before, after := newSpawn("before"), newSpawn("after")
	var attempts []string
	resolver := llmtoolkit.ResolverFunc(func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		attempt := activity.GetInfo(ctx).Attempt
		mu.Lock()
		attempts = append(attempts, fmt.Sprintf("%s#%d", call.Name, attempt))
		mu.Unlock()
		if attempt > 1 {
			return after.Resolve(ctx, call)
		}
		// The first worker runs the sub-agent until it hangs in block,
		// then dies: its goroutine and its Workspaces are abandoned.
		go func() { _, _ = before.Resolve(context.WithoutCancel(ctx), call) }()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			first := ""
			if len(roots) == 1 {
				first = roots[0]
			}
			mu.Unlock()
			if first != "" {
				if _, err := os.Stat(filepath.Join(first, "first.txt")); err == nil {
					break
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond) // it is in block
		return "", Retryable(fmt.Errorf("the worker died during the call"))
	})
	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkittest.Call(agent.SpawnToolName, map[string]any{"task": "write the files"})),
		llmtoolkittest.Reply("done"),
	)
	env := newEnv(t, &Activities{Send: model.Send, Options: agentloop.Options{Resolver: llmtoolkit.Indexed(resolver, before.Tools())}})
	env.ExecuteWorkflow(WorkflowName, RunInput{
		Messages:  []agentloop.Message{agentloop.UserMessage("spawn")},
		ToolRetry: &sdktemporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 3},
	})
	out := runOutput(t, env)
	require.NoError(t, out.Error())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"spawn_agent#1", "spawn_agent#2"}, attempts)
	require.Len(t, roots, 2)
	assert.Equal(t, roots[0], roots[1], "the retry works in the same copy")
	require.Len(t, found, 1)
	assert.Contains(t, found[0], "from the first attempt")
	var answer string
	for _, m := range out.History {
		if m.Role == agentloop.RoleTool && m.ToolName == agent.SpawnToolName {
			answer = m.Content
		}
	}
	assert.Contains(t, answer, "found again after the run resumed")
	for file, want := range map[string]string{"first.txt": "from the first attempt\n", "second.txt": "from the retry\n"} {
		got, err := os.ReadFile(filepath.Join(root, file))
		require.NoError(t, err)
		assert.Equal(t, want, string(got), file)
	}
	assert.False(t, strings.Contains(answer, "NOT applied"), answer)
}
