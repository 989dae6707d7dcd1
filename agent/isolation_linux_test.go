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
	// The job writes a file outside the workspace: unconfined.
	ws := newWorkspaces(t, agent.WorkspaceConfig{Root: root, Tools: codeToolsIn(codetools.WithBackgroundJobs(), codetools.WithSandbox(codetools.SandboxPolicy{})),
		AllowUnconfinedCommands: true, Decide: func(context.Context, agent.WorkspaceResult) agent.WorkspaceAction { return agent.ActionDiscard }})
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

// TestUnconfinedBashCannotWriteTheParentsTree: whatever the host's factory
// makes, a sub-agent's bash writes the parent's tree only when the host
// says so (AllowUnconfinedCommands): an unsandboxed bash, a sandbox that
// shows the parent's tree, a tool declared writable outside the
// workspace and a tool the resolver does not list are refused, with the
// option and the fix named; a sandboxed bash runs and writes only the
// workspace.
func TestUnconfinedBashCannotWriteTheParentsTree(t *testing.T) {
	sandboxed := []codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite}), codetools.WithSandboxRequired()}
	probe, err := codetools.New(t.TempDir(), sandboxed...)
	haveSandbox := err == nil
	if haveSandbox {
		require.NoError(t, probe.Close())
	}
	unsandboxed := codetools.WithSandbox(codetools.SandboxPolicy{})
	for _, tc := range []struct {
		name      string
		tools     func(root string) func(context.Context, agent.Workspace) (llmtoolkit.Resolver, io.Closer, error)
		allow     bool
		sandbox   bool   // needs a sandbox backend
		refused   string // in the spawn's error, "" when it starts
		callError string // in the bash call's answer, "" when it runs
		writes    bool   // the parent's file is written
	}{
		{name: "unsandboxed codetools", tools: func(string) func(context.Context, agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
			return codeToolsIn(unsandboxed)
		}, refused: "WorkspaceConfig.AllowUnconfinedCommands"},
		{name: "sandbox showing the parent's tree", sandbox: true, tools: func(root string) func(context.Context, agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
			return codeToolsIn(codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite, Readable: []string{filepath.Dir(root)}}))
		}, refused: "SandboxPolicy.Readable"},
		{name: "declared writable outside the workspace", tools: func(root string) func(context.Context, agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
			return func(ctx context.Context, w agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
				ct, err := codetools.New(w.Root, unsandboxed)
				if err != nil {
					return nil, nil, err
				}
				tools := append([]llmtoolkit.Tool{}, ct.Tools()...)
				for i := range tools {
					if tools[i].Commands != nil {
						c := *tools[i].Commands
						c.Sandbox = &llmtoolkit.CommandSandbox{Writable: []string{w.Root, root}}
						tools[i].Commands = &c
					}
				}
				return llmtoolkit.Indexed(llmtoolkit.ResolverFunc(ct.Resolve), tools), ct, nil
			}
		}, refused: "outside its workspace"},
		{name: "unlisted bash", tools: func(string) func(context.Context, agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
			return func(ctx context.Context, w agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
				ct, err := codetools.New(w.Root, unsandboxed)
				if err != nil {
					return nil, nil, err
				}
				read, _ := ct.LookupTool("read_file")
				return llmtoolkit.Indexed(llmtoolkit.ResolverFunc(ct.Resolve), []llmtoolkit.Tool{read}), ct, nil // lists read_file, serves bash too
			}
		}, callError: "not among the sub-agent's tools"},
		{name: "sandboxed bash", sandbox: true, tools: func(string) func(context.Context, agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
			return codeToolsIn(sandboxed...)
		}, callError: "exited with code 1"}, // the parent's tree is not even there
		{name: "AllowUnconfinedCommands", allow: true, tools: func(string) func(context.Context, agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
			return codeToolsIn(unsandboxed)
		}, writes: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.sandbox && !haveSandbox {
				t.Skip("no sandbox backend here")
			}
			root := greetRepo(t, false)
			dir := filepath.Join(t.TempDir(), "workspaces")
			ws := newWorkspaces(t, agent.WorkspaceConfig{Root: root, Dir: dir, Tools: tc.tools(root), AllowUnconfinedCommands: tc.allow,
				Decide: func(context.Context, agent.WorkspaceResult) agent.WorkspaceAction { return agent.ActionDiscard }})
			defer func() { require.NoError(t, ws.Close()) }()
			target := filepath.Join(root, "pwned")
			sub := lt.NewScriptedModel(t,
				lt.CallTools(llmtoolkit.Call{ID: "b", Name: "bash", Arguments: map[string]any{"command": "echo x > " + target + " && echo WROTE"}}),
				lt.Reply("tried"))
			spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Workspaces: ws, Isolation: agent.IsolationCopy, AllowMutating: true, NewID: fixedID("sub-u")})
			res := llmtoolkit.Execute(t.Context(), spawn, spawnIn("s", "x", ""))
			if tc.refused != "" {
				require.True(t, res.IsError)
				assert.Contains(t, res.Content, tc.refused)
				assert.Contains(t, res.Content, "codetools.WithSandbox")
				assert.Empty(t, sub.Requests(), "the sub-agent never ran")
			} else {
				require.False(t, res.IsError, res.Content)
				var answer string
				for _, m := range sub.Requests()[1].Messages {
					if m.Role == agentloop.RoleTool {
						answer = m.Content
					}
				}
				if tc.callError != "" {
					assert.Contains(t, answer, tc.callError)
					assert.NotContains(t, answer, "WROTE")
				}
			}
			if tc.writes {
				assert.FileExists(t, target, "the host allowed it")
			} else {
				assert.NoFileExists(t, target, "the parent's tree is out of the sub-agent's bash's reach")
			}
			assert.Equal(t, []string{".records"}, names(must(os.ReadDir(dir))), "no workspace left")
		})
	}
}
