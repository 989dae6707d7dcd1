package agent_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// TestWorktreeSandboxHidesTheParentsRepository: a sub-agent in a worktree
// whose bash runs in the sandbox (workspace-write, rooted in the
// worktree) cannot reach the parent's repository: not through the path
// its .git file names, not with git -C, not by writing a hook; git in the
// worktree finds no repository. Its edit of a tracked file still comes
// back as a diff.
func TestWorktreeSandboxHidesTheParentsRepository(t *testing.T) {
	opts := []codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite}), codetools.WithSandboxRequired()}
	probe, err := codetools.New(t.TempDir(), opts...)
	if err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	require.NoError(t, probe.Close())
	repo := greetRepo(t, true)
	var seen agent.Workspace
	ws := newWorkspaces(t, agent.WorkspaceConfig{Root: repo, Tools: func(ctx context.Context, w agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
		seen = w
		return codeToolsIn(opts...)(ctx, w)
	}, Decide: func(context.Context, agent.WorkspaceResult) agent.WorkspaceAction { return agent.ActionDiscard }})
	defer func() { require.NoError(t, ws.Close()) }()
	cmd := strings.ReplaceAll(`p=$(sed 's/^gitdir: //' .git)
cat "$p/HEAD" && echo LEAK-private
cat REPO/.git/config && echo LEAK-config
echo 'touch /tmp/pwned' > REPO/.git/hooks/pre-commit && echo LEAK-hook
git -C REPO log -1 && echo LEAK-git-C
git log -1 && echo LEAK-git
ls REPO && echo LEAK-tree
echo changed > main.go && echo EDITED`, "REPO", repo)
	sub := lt.NewScriptedModel(t, lt.CallTools(llmtoolkit.Call{ID: "b", Name: "bash", Arguments: map[string]any{"command": cmd}}), lt.Reply("tried"))
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Workspaces: ws, Isolation: agent.IsolationWorktree, AllowMutating: true, NewID: fixedID("sub-s")})
	res := llmtoolkit.Execute(t.Context(), spawn, spawnIn("s", "x", ""))
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, filepath.Join(repo, ".git"), seen.GitDir)

	var out string
	for _, m := range sub.Requests()[1].Messages {
		if m.Role == agentloop.RoleTool {
			out = m.Content
		}
	}
	assert.Contains(t, out, "EDITED", out)
	assert.NotContains(t, out, "LEAK", "the parent's repository is out of reach")
	assert.NoFileExists(t, filepath.Join(repo, ".git", "hooks", "pre-commit"))
	assert.Contains(t, res.Display.Payload.(agent.SubAgentPayload).Diff, "+changed")
	assert.Equal(t, greetGo, string(must(os.ReadFile(filepath.Join(repo, "main.go")))))
}

// TestWorkspaceJobsEndWithTheSubAgent: a background job a sub-agent
// started in its workspace (codetools' jobs, made by the host's factory)
// ends when the sub-agent ends, before its changes are read; the file it
// was writing is not in the diff after it.
func TestWorkspaceJobsEndWithTheSubAgent(t *testing.T) {
	root := greetRepo(t, false)
	ws := newWorkspaces(t, agent.WorkspaceConfig{Root: root, Tools: codeToolsIn(codetools.WithBackgroundJobs()),
		Decide: func(context.Context, agent.WorkspaceResult) agent.WorkspaceAction { return agent.ActionDiscard }})
	defer func() { require.NoError(t, ws.Close()) }()
	pidFile := filepath.Join(t.TempDir(), "pid")
	sub := lt.NewScriptedModel(t,
		lt.CallTools(llmtoolkit.Call{ID: "j", Name: "bash", Arguments: map[string]any{"command": "while :; do date +%s%N > " + pidFile + "; sleep 0.05; done", "run_in_background": true}}),
		lt.Respond(func(ctx context.Context, _ []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			for range 200 {
				if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			return agentloop.Response{Content: "started"}, nil
		}))
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Workspaces: ws, Isolation: agent.IsolationCopy, AllowMutating: true, NewID: fixedID("sub-j")})
	res := llmtoolkit.Execute(t.Context(), spawn, spawnIn("s", "x", ""))
	require.False(t, res.IsError, res.Content)
	first := string(must(os.ReadFile(pidFile)))
	require.NotEmpty(t, first, "the job ran")
	time.Sleep(500 * time.Millisecond)
	assert.Equal(t, first, string(must(os.ReadFile(pidFile))), "the job ended with the sub-agent: it writes no more")
}
