package dbos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// assistantTurns counts the model's answers in msgs.
func assistantTurns(msgs []agentloop.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == agentloop.RoleAssistant {
			n++
		}
	}
	return n
}

// workspaceAgent is the workspace crash test's agent: the parent spawns one
// sub-agent in a copy of Dir/tree (applied when it ends) and writes the
// spawn's answer to seen.log. The sub-agent reads first.txt; when it is
// not there (the first attempt) it writes it, then calls block (the call
// the first process is killed in); when it is there (the workspace was
// found again) it logs what it read to found.log, writes second.txt and
// answers. The factory logs each workspace's root to ws.log; NewWorkspaces
// logs how many it swept to swept.log. eng is the process's engine
// (WorkspaceConfig.MayResume).
func workspaceAgent(spec childSpec, eng **Engine) AgentFunc {
	return func(ctx context.Context, run Run) (agentloop.SendFunc, agentloop.Options, error) {
		ws, err := agent.NewWorkspaces(ctx, agent.WorkspaceConfig{
			Root: filepath.Join(spec.Dir, "tree"), Dir: filepath.Join(spec.Dir, "workspaces"), Logger: quietLogger(),
			MayResume: (*eng).MayResume,
			Tools: func(_ context.Context, w agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
				if err := appendLine(spec.Dir, "ws.log", spec.Executor+" "+w.Root); err != nil {
					return nil, nil, err
				}
				code, err := codetools.New(w.Root)
				if err != nil {
					return nil, nil, err
				}
				block := llmtoolkit.MustTool("block", "blocks", map[string]any{"type": "object"})
				blocker := llmtoolkit.Indexed(llmtoolkit.ResolverFunc(func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
					if err := os.WriteFile(filepath.Join(spec.Dir, "blocked"), nil, 0o644); err != nil {
						return "", err
					}
					<-ctx.Done() // the parent kills the process here
					return "", ctx.Err()
				}), []llmtoolkit.Tool{block})
				files := llmtoolkit.Filter(code, func(t llmtoolkit.Tool) bool { return t.Commands == nil })
				return llmtoolkit.Compose(files, blocker), code, nil
			},
			Decide: func(context.Context, agent.WorkspaceResult) agent.WorkspaceAction { return agent.ActionApply },
		})
		if err != nil {
			return nil, agentloop.Options{}, err
		}
		context.AfterFunc(ctx, func() { ws.Close() })
		if err := appendLine(spec.Dir, "swept.log", fmt.Sprintf("%s %d", spec.Executor, ws.Swept())); err != nil {
			return nil, agentloop.Options{}, err
		}
		write := func(id, path, content string) agentloop.Response {
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: id, Name: "write_file", Arguments: map[string]any{"path": path, "content": content}}}}
		}
		sub := func(ctx context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			last := msgs[len(msgs)-1]
			switch assistantTurns(msgs) {
			case 0:
				return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "r1", Name: "read_file", Arguments: map[string]any{"path": "first.txt"}}}}, nil
			case 1:
				if last.IsError {
					return write("w1", "first.txt", "written by the first attempt\n"), nil
				}
				told := strings.Contains(msgs[0].Content, "interrupted and is resumed")
				if err := appendLine(spec.Dir, "found.log", strconv.Quote(last.Content)+" "+strconv.FormatBool(told)); err != nil {
					return agentloop.Response{}, err
				}
				return write("w2", "second.txt", "written by the second attempt\n"), nil
			case 2:
				if spec.Executor == "a" {
					return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "b1", Name: "block", Arguments: map[string]any{}}}}, nil
				}
			}
			return agentloop.Response{Content: "finished"}, nil
		}
		spawn, err := agent.SpawnAgent(agent.SubAgentConfig{Model: sub, Workspaces: ws, Isolation: agent.IsolationCopy, AllowMutating: true, Logger: quietLogger()})
		if err != nil {
			return nil, agentloop.Options{}, err
		}
		send := func(ctx context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			if assistantTurns(msgs) == 0 {
				return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "spawn-1", Name: agent.SpawnToolName, Arguments: map[string]any{"task": "write the files"}}}}, nil
			}
			last := msgs[len(msgs)-1]
			if err := appendLine(spec.Dir, "seen.log", strconv.Quote(last.Content)+" "+strconv.FormatBool(last.IsError)); err != nil {
				return agentloop.Response{}, err
			}
			return agentloop.Response{Content: "done", StopReason: "stop"}, nil
		}
		return send, agentloop.Options{Resolver: spawn}, nil
	}
}

// TestCrashResumeFindsTheSubAgentsWorkspace: a run whose process is
// SIGKILLed while its sub-agent works in a copy (first.txt written there,
// a call blocking) resumes in a new process, whose NewWorkspaces keeps
// that copy (the run may resume: Engine.MayResume) and whose spawn_agent
// call, run again, finds it again: the same folder, first.txt in it, the
// sub-agent told so; its changes of both attempts are applied to the
// parent's tree, and no workspace is left.
func TestCrashResumeFindsTheSubAgentsWorkspace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "tree"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tree", "README"), []byte("parent\n"), 0o644))
			spec := childSpec{DB: db(t), Dir: dir, Run: "run-ws", Executor: "a", Start: true, Agent: "workspace"}
			first := startChild(t, spec)
			waitFile(t, first, filepath.Join(dir, "blocked"), 60*time.Second)
			first.kill(t)
			assert.NoFileExists(t, filepath.Join(dir, "tree", "first.txt"), "not applied before the crash")

			spec.Executor, spec.Start = "b", false // another process; it recovers a's run
			spec.Recover = "a"
			second := startChild(t, spec)
			second.wait(t, 90*time.Second)
			b, err := os.ReadFile(filepath.Join(dir, "result-b.json"))
			require.NoError(t, err, second.output())
			var res Result
			require.NoError(t, json.Unmarshal(b, &res))
			assert.Equal(t, "done", res.Response.Content)
			assert.Nil(t, res.Error)

			assert.Equal(t, map[string]int{"a 0": 1, "b 0": 1}, lines(t, dir, "swept.log"), "the resumed run's workspace is not swept")
			roots := lines(t, dir, "ws.log")
			require.Len(t, roots, 2, "one workspace per attempt: %v", roots)
			var paths []string
			for line := range roots {
				_, p, _ := strings.Cut(line, " ")
				paths = append(paths, p)
			}
			assert.Equal(t, paths[0], paths[1], "the same folder in both attempts")
			found := lines(t, dir, "found.log")
			require.Len(t, found, 1)
			for line := range found {
				assert.Contains(t, line, "written by the first attempt", "the second attempt found the first's file")
				assert.True(t, strings.HasSuffix(line, " true"), "the sub-agent was told it resumes: %s", line)
			}
			seen := lines(t, dir, "seen.log")
			require.Len(t, seen, 1)
			for line := range seen {
				assert.Contains(t, line, "found again after the run resumed")
				assert.Contains(t, line, "applied to your tree")
			}
			for file, want := range map[string]string{"first.txt": "written by the first attempt\n", "second.txt": "written by the second attempt\n", "README": "parent\n"} {
				got, err := os.ReadFile(filepath.Join(dir, "tree", file))
				require.NoError(t, err)
				assert.Equal(t, want, string(got), file)
			}
			entries, err := os.ReadDir(filepath.Join(dir, "workspaces"))
			require.NoError(t, err)
			require.Len(t, entries, 1, "no workspace left")
			assert.Equal(t, ".records", entries[0].Name())
			records, err := os.ReadDir(filepath.Join(dir, "workspaces", ".records"))
			require.NoError(t, err)
			assert.Empty(t, records)
		})
	}
}
