package agent_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

const greetGo = "package main\n\nfunc greet() string {\n\treturn \"hello\"\n}\n\nfunc main() { println(greet()) }\n"

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

// greetRepo is a git repository (git is true) or a plain folder holding
// main.go.
func greetRepo(t *testing.T, git bool) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := filepath.Join(t.TempDir(), "repo")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte(greetGo), 0o644))
	if git {
		gitIn(t, root, "init", "--quiet", "-b", "main")
		gitIn(t, root, "add", "main.go")
		gitIn(t, root, "commit", "--quiet", "-m", "first")
	}
	return root
}

// codeToolsIn is the host's factory: codetools rooted in the workspace,
// bash in the sandbox (workspace-write: it writes only the workspace).
func codeToolsIn(opts ...codetools.Option) func(context.Context, agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
	return func(_ context.Context, ws agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
		ct, err := codetools.New(ws.Root, append([]codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite})}, opts...)...)
		if err != nil {
			return nil, nil, err
		}
		return ct, ct, nil
	}
}

func newWorkspaces(t *testing.T, cfg agent.WorkspaceConfig) *agent.Workspaces {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(t.TempDir(), "workspaces")
	}
	if cfg.Tools == nil {
		cfg.Tools = codeToolsIn()
	}
	cfg.Logger = quiet
	w, err := agent.NewWorkspaces(t.Context(), cfg)
	require.NoError(t, err)
	return w
}

// editingModel is the sub-agents' model: a script per word (the task
// names it), each an edit of greet to return that word, then an answer.
// Every sub-agent edits before any answers (a barrier), so they work at
// the same time on the same base.
func editingModel(t *testing.T, words ...string) agentloop.SendFunc {
	scripts := map[string]*lt.ScriptedModel{}
	var edited sync.WaitGroup
	edited.Add(len(words))
	for _, w := range words {
		scripts[w] = lt.NewScriptedModel(t,
			lt.CallTools(llmtoolkit.Call{ID: "e-" + w, Name: "edit_file", Arguments: map[string]any{"path": "main.go", "oldText": `"hello"`, "newText": `"` + w + `"`}}),
			lt.Respond(func(ctx context.Context, _ []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
				edited.Done()
				done := make(chan struct{})
				go func() { edited.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					return agentloop.Response{}, fmt.Errorf("the other sub-agents did not edit")
				}
				return agentloop.Response{Content: "greet returns " + w}, nil
			}))
	}
	return func(ctx context.Context, msgs []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
		for _, m := range msgs {
			if m.Role == agentloop.RoleUser {
				for w, s := range scripts {
					if strings.Contains(m.Content, "'"+w+"'") {
						return s.Send(ctx, msgs, tools)
					}
				}
			}
		}
		return agentloop.Response{}, fmt.Errorf("no script for %v", msgs)
	}
}

func spawnIn(id, word, isolation string) llmtoolkit.Call {
	args := map[string]any{"task": "Make greet return '" + word + "'.", "description": "greet " + word}
	if isolation != "" {
		args["isolation"] = isolation
	}
	return llmtoolkit.Call{ID: id, Name: agent.SpawnToolName, Arguments: args}
}

// payloads collects the subagent Displays of a parent run.
type payloads struct {
	mu   sync.Mutex
	list []agent.SubAgentPayload
}

func (p *payloads) onIteration(it agentloop.Iteration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range it.Results {
		if r.Display != nil && r.Display.Kind == agent.DisplaySubAgent {
			p.list = append(p.list, r.Display.Payload.(agent.SubAgentPayload))
		}
	}
}

func counterIDs() func() string {
	var n atomic.Int32
	return func() string { return fmt.Sprintf("sub-%d", n.Add(1)) }
}

func worktreeCount(t *testing.T, repo string) int {
	return strings.Count(gitIn(t, repo, "worktree", "list", "--porcelain"), "worktree ")
}

// TestTwoWorktreeSubAgentsEditTheSameFunction is issue 51's proof: a
// parent model sends two sub-agents at once, each in a git worktree
// (chosen by the model), to change greet differently. Both diffs come
// back; the host applies each as it ends: one applies, the other reports
// its conflict by file and writes nothing; the parent's tree holds
// exactly the applied change; the spawn_agent rows name each workspace;
// after Close no worktree or branch is left.
func TestTwoWorktreeSubAgentsEditTheSameFunction(t *testing.T) {
	repo := greetRepo(t, true)
	var decided []agent.WorkspaceResult
	var mu sync.Mutex
	ws := newWorkspaces(t, agent.WorkspaceConfig{Root: repo, Decide: func(_ context.Context, r agent.WorkspaceResult) agent.WorkspaceAction {
		mu.Lock()
		decided = append(decided, r)
		mu.Unlock()
		return agent.ActionApply
	}})
	spawn := newSpawn(t, agent.SubAgentConfig{Model: editingModel(t, "hola", "bonjour"), Workspaces: ws, ModelChoosesIsolation: true,
		AllowMutating: true, NewID: counterIDs()})
	def, _ := llmtoolkit.FindTool(spawn, agent.SpawnToolName)
	assert.Contains(t, def.Parameters["properties"].(map[string]any), "isolation")
	assert.False(t, def.Annotations.ReadOnly, "an apply writes the parent's tree")

	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	rec := trace.Record(spawn, db)
	parent := lt.NewScriptedModel(t, lt.CallTools(spawnIn("s1", "hola", "worktree"), spawnIn("s2", "bonjour", "worktree")), lt.Reply("done"))
	var got payloads
	ctx := trace.WithConversation(t.Context(), tenant, conv, 0)
	_, _, err = agentloop.Run(ctx, nil, parent.Send, agentloop.Options{Resolver: rec, Logger: quiet, OnIteration: got.onIteration})
	require.NoError(t, err)
	require.NoError(t, rec.Close())

	require.Len(t, got.list, 2)
	require.Len(t, decided, 2)
	var applied, conflicted *agent.SubAgentPayload
	for i := range got.list {
		p := &got.list[i]
		assert.Equal(t, "worktree", p.Isolation)
		assert.Equal(t, "agent/"+p.ID, p.Branch)
		assert.Equal(t, 1, p.Files)
		assert.Equal(t, ".llmtoolkit/patches/"+p.ID+".patch", p.PatchFile)
		patch, err := os.ReadFile(filepath.Join(repo, p.PatchFile))
		require.NoError(t, err, "the patch file is in the parent's root, for its tools")
		assert.Equal(t, p.Diff, string(patch))
		switch p.Outcome {
		case "applied":
			applied = p
		case "waiting":
			conflicted = p
		}
	}
	require.NotNil(t, applied, "one applies: %+v", got.list)
	require.NotNil(t, conflicted, "the other conflicts: %+v", got.list)
	word := map[bool]string{true: "hola", false: "bonjour"}[strings.Contains(applied.Diff, `+	return "hola"`)]
	other := map[string]string{"hola": "bonjour", "bonjour": "hola"}[word]
	assert.Contains(t, applied.Diff, `+	return "`+word+`"`)
	assert.Contains(t, conflicted.Diff, `+	return "`+other+`"`, "both diffs come back")
	assert.Contains(t, conflicted.Conflicts, "main.go (both sides changed the same lines)")

	main, err := os.ReadFile(filepath.Join(repo, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, strings.Replace(greetGo, "hello", word, 1), string(main), "exactly the applied change")
	assert.Equal(t, " M main.go\n", gitIn(t, repo, "status", "--porcelain"), "the patches folder is ignored, the index untouched")
	assert.Equal(t, 2, worktreeCount(t, repo), "the conflicted one waits for a decision")

	rows, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: conv})
	require.NoError(t, err)
	spawned := 0
	for _, r := range rows {
		if r.ToolName != agent.SpawnToolName {
			assert.NotNil(t, r.AgentID, "the sub-agents' own calls")
			continue
		}
		spawned++
		text := fmt.Sprint(r.Result)
		assert.Contains(t, text, "isolation worktree, branch agent/sub-", "the row names the workspace")
	}
	assert.Equal(t, 2, spawned)

	require.NoError(t, ws.Close())
	assert.Equal(t, 1, worktreeCount(t, repo), "no worktree left")
	assert.NotContains(t, gitIn(t, repo, "branch", "--list"), "agent/")
	assert.NoFileExists(t, filepath.Join(repo, applied.PatchFile), "the patch files go at Close")
	assert.Equal(t, strings.Replace(greetGo, "hello", word, 1), string(must(os.ReadFile(filepath.Join(repo, "main.go")))))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestTwoCopySubAgentsEditTheSameFunction: the proof in copy mode, on a
// folder without git, the model deciding through finish_workspace: both
// wait with their diffs; the first apply lands, the second reports its
// conflict and changes nothing, the model discards it; nothing is left.
func TestTwoCopySubAgentsEditTheSameFunction(t *testing.T) {
	root := greetRepo(t, false)
	dir := filepath.Join(t.TempDir(), "workspaces")
	ws := newWorkspaces(t, agent.WorkspaceConfig{Root: root, Dir: dir, ModelDecides: true})
	spawn := newSpawn(t, agent.SubAgentConfig{Model: editingModel(t, "hola", "bonjour"), Workspaces: ws, Isolation: agent.IsolationCopy,
		AllowMutating: true, NewID: counterIDs()})
	assert.Equal(t, []string{agent.SpawnToolName, agent.FinishToolName}, toolNames(spawn.Tools()))
	def, _ := llmtoolkit.FindTool(spawn, agent.SpawnToolName)
	assert.NotContains(t, def.Parameters["properties"].(map[string]any), "isolation", "the host chose")

	finish := func(id, agentID, action string) lt.Turn {
		return lt.CallTools(llmtoolkit.Call{ID: id, Name: agent.FinishToolName, Arguments: map[string]any{"agent_id": agentID, "action": action}})
	}
	parent := lt.NewScriptedModel(t, lt.CallTools(spawnIn("s1", "hola", ""), spawnIn("s2", "bonjour", "")),
		finish("f1", "sub-1", "apply"), finish("f2", "sub-2", "apply"), finish("f3", "sub-2", "discard"), lt.Reply("done"))
	var got payloads
	var results []llmtoolkit.Result
	_, _, err := agentloop.Run(t.Context(), nil, parent.Send, agentloop.Options{Resolver: spawn, Logger: quiet, OnIteration: func(it agentloop.Iteration) {
		got.onIteration(it)
		results = append(results, it.Results...)
	}})
	require.NoError(t, err)
	require.Len(t, got.list, 2)
	words := map[string]string{}
	for _, p := range got.list {
		assert.Equal(t, "copy", p.Isolation)
		assert.Equal(t, "waiting", p.Outcome)
		assert.Empty(t, p.Branch)
		for _, w := range []string{"hola", "bonjour"} {
			if strings.Contains(p.Diff, `+	return "`+w+`"`) {
				words[p.ID] = w
			}
		}
	}
	require.Len(t, words, 2, "both diffs come back")
	require.Len(t, results, 5)
	assert.Contains(t, results[0].Content, "decide with finish_workspace")
	assert.False(t, results[2].IsError, results[2].Content)
	assert.True(t, results[3].IsError)
	assert.Contains(t, results[3].Content, "main.go (both sides changed the same lines)")
	assert.False(t, results[4].IsError, results[4].Content)

	main := must(os.ReadFile(filepath.Join(root, "main.go")))
	assert.Equal(t, strings.Replace(greetGo, "hello", words["sub-1"], 1), string(main), "exactly the applied change")
	entries := must(os.ReadDir(dir))
	assert.Equal(t, []string{".records"}, names(entries), "no copy left")
	assert.Empty(t, must(os.ReadDir(filepath.Join(dir, ".records"))))
	require.NoError(t, ws.Close())
}

func names(entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestWorkspacePermissionsMapOntoTheWorkspace: the parent's deny rule on
// a path holds for the sub-agent's tools in its copy, the same relative
// path; the edit it allows lands in the copy only until applied.
func TestWorkspacePermissionsMapOntoTheWorkspace(t *testing.T) {
	root := greetRepo(t, false)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "secret"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "secret", "key.txt"), []byte("k\n"), 0o644))
	ws := newWorkspaces(t, agent.WorkspaceConfig{Root: root, Decide: func(context.Context, agent.WorkspaceResult) agent.WorkspaceAction { return agent.ActionDiscard }})
	defer func() { require.NoError(t, ws.Close()) }()
	sub := lt.NewScriptedModel(t,
		lt.CallTools(llmtoolkit.Call{ID: "w1", Name: "write_file", Arguments: map[string]any{"path": "secret/key.txt", "content": "stolen"}},
			llmtoolkit.Call{ID: "w2", Name: "write_file", Arguments: map[string]any{"path": "./sub/../secret/new.txt", "content": "x"}},
			llmtoolkit.Call{ID: "w3", Name: "write_file", Arguments: map[string]any{"path": "ok.txt", "content": "fine"}}),
		lt.Reply("tried"))
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Workspaces: ws, Isolation: agent.IsolationCopy, AllowMutating: true, NewID: fixedID("sub-p")})
	p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "write_file", Argument: "path", Glob: "secret/**"}}})
	res := llmtoolkit.Execute(t.Context(), p.Guard(spawn), spawnIn("s", "x", ""))
	require.False(t, res.IsError, res.Content)
	msgs := sub.Requests()[1].Messages
	var denied, ran int
	for _, m := range msgs {
		if m.Role == agentloop.RoleTool {
			if strings.Contains(m.Content, "permission denied") {
				denied++
			} else {
				ran++
			}
		}
	}
	assert.Equal(t, 2, denied, "both spellings of the denied folder are refused inside the copy")
	assert.Equal(t, 1, ran)
	pl := res.Display.Payload.(agent.SubAgentPayload)
	assert.Contains(t, pl.Diff, "b/ok.txt")
	assert.NotContains(t, pl.Diff, "secret")
	assert.Equal(t, "discarded", pl.Outcome)
	assert.NoFileExists(t, filepath.Join(root, "ok.txt"), "discarded: the parent is untouched")
	assert.Equal(t, "k\n", string(must(os.ReadFile(filepath.Join(root, "secret", "key.txt")))))
}

// TestSubAgentCancelledMidEdit: a sub-agent that edited its worktree and
// runs a real process (bash sleep) when its parent is cancelled leaves the
// parent's tree untouched and its workspace removed, branch included.
func TestSubAgentCancelledMidEdit(t *testing.T) {
	for _, iso := range []agent.Isolation{agent.IsolationWorktree, agent.IsolationCopy} {
		t.Run(string(iso), func(t *testing.T) {
			repo := greetRepo(t, iso == agent.IsolationWorktree)
			dir := filepath.Join(t.TempDir(), "workspaces")
			// Its bash writes a marker outside the workspace: unconfined.
			ws := newWorkspaces(t, agent.WorkspaceConfig{Root: repo, Dir: dir, Tools: codeToolsIn(codetools.WithSandbox(codetools.SandboxPolicy{})), AllowUnconfinedCommands: true, Decide: func(context.Context, agent.WorkspaceResult) agent.WorkspaceAction {
				t.Error("a cancelled sub-agent's workspace is discarded without asking")
				return agent.ActionApply
			}})
			defer func() { require.NoError(t, ws.Close()) }()
			marker := filepath.Join(t.TempDir(), "sleeping")
			sub := lt.NewScriptedModel(t,
				lt.CallTools(llmtoolkit.Call{ID: "e", Name: "edit_file", Arguments: map[string]any{"path": "main.go", "oldText": `"hello"`, "newText": `"half`}}),
				lt.CallTools(llmtoolkit.Call{ID: "b", Name: "bash", Arguments: map[string]any{"command": "touch " + marker + "; sleep 60"}}))
			spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Workspaces: ws, Isolation: iso, AllowMutating: true, NewID: fixedID("sub-k")})
			ctx, cancel := context.WithCancel(t.Context())
			go func() {
				for range 600 {
					if _, err := os.Stat(marker); err == nil {
						cancel()
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
			start := time.Now()
			res := llmtoolkit.Execute(ctx, spawn, spawnIn("s", "x", ""))
			cancel()
			require.True(t, res.IsError)
			assert.Less(t, time.Since(start), 30*time.Second, "the sleep was killed")
			assert.Equal(t, greetGo, string(must(os.ReadFile(filepath.Join(repo, "main.go")))), "the parent is untouched")
			assert.Equal(t, []string{".records"}, names(must(os.ReadDir(dir))), "its workspace is removed")
			if iso == agent.IsolationWorktree {
				assert.Equal(t, 1, worktreeCount(t, repo))
				assert.NotContains(t, gitIn(t, repo, "branch", "--list"), "agent/")
			}
		})
	}
}

// TestSubAgentHostKilledMidEdit: a host SIGKILLed while its sub-agent is
// in the middle of an edit in a worktree leaves the worktree and its
// branch; the next start (NewWorkspaces on the same folder) removes them,
// and the parent's tree was never touched.
func TestSubAgentHostKilledMidEdit(t *testing.T) {
	if os.Getenv("LLMTOOLKIT_TEST_KILLED_HOST") != "" {
		killedHost(t)
		return
	}
	repo := greetRepo(t, true)
	dir := filepath.Join(t.TempDir(), "workspaces")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSubAgentHostKilledMidEdit$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LLMTOOLKIT_TEST_KILLED_HOST="+repo+"|"+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	ready := make(chan string, 1)
	go func() {
		b := make([]byte, 4096)
		var seen string
		for {
			n, err := out.Read(b)
			seen += string(b[:n])
			if strings.Contains(seen, "EDITED ") {
				ready <- seen
				return
			}
			if err != nil {
				ready <- seen
				return
			}
		}
	}()
	select {
	case s := <-ready:
		require.Contains(t, s, "EDITED ", "the child host did not get to the edit")
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the child host did not get to the edit")
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.Equal(t, 2, worktreeCount(t, repo), "the dead host left its worktree")

	ws := newWorkspaces(t, agent.WorkspaceConfig{Root: repo, Dir: dir})
	assert.Equal(t, 1, ws.Swept())
	assert.Equal(t, 1, worktreeCount(t, repo), "no worktree left, no prune needed")
	assert.NotContains(t, gitIn(t, repo, "branch", "--list"), "agent/")
	assert.Equal(t, greetGo, string(must(os.ReadFile(filepath.Join(repo, "main.go")))))
	require.NoError(t, ws.Close())
}

// killedHost is the child of TestSubAgentHostKilledMidEdit: a host whose
// sub-agent edits its worktree, says so, and hangs until killed.
func killedHost(t *testing.T) {
	repo, dir, _ := strings.Cut(os.Getenv("LLMTOOLKIT_TEST_KILLED_HOST"), "|")
	ws := newWorkspaces(t, agent.WorkspaceConfig{Root: repo, Dir: dir})
	sub := lt.NewScriptedModel(t,
		lt.CallTools(llmtoolkit.Call{ID: "e", Name: "edit_file", Arguments: map[string]any{"path": "main.go", "oldText": `"hello"`, "newText": `"half`}}),
		lt.Respond(func(ctx context.Context, _ []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			fmt.Println("EDITED ")
			<-ctx.Done()
			return agentloop.Response{}, ctx.Err()
		}))
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Workspaces: ws, Isolation: agent.IsolationWorktree, AllowMutating: true, NewID: fixedID("sub-dead")})
	llmtoolkit.Execute(t.Context(), spawn, spawnIn("s", "x", ""))
}

// TestSpawnAgentIsolationRefusals: a worktree asked for a folder without
// git, an isolation without Workspaces, a nested isolated spawn.
func TestSpawnAgentIsolationRefusals(t *testing.T) {
	plain := greetRepo(t, false)
	ws := newWorkspaces(t, agent.WorkspaceConfig{Root: plain})
	defer func() { require.NoError(t, ws.Close()) }()
	model := lt.NewScriptedModel(t)
	_, err := agent.SpawnAgent(agent.SubAgentConfig{Model: model.Send, Isolation: agent.IsolationWorktree, Workspaces: ws})
	require.ErrorIs(t, err, agent.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "use copy")
	_, err = agent.SpawnAgent(agent.SubAgentConfig{Model: model.Send, Isolation: agent.IsolationCopy})
	require.ErrorIs(t, err, agent.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "Workspaces")
	_, err = agent.SpawnAgent(agent.SubAgentConfig{Model: model.Send, Isolation: "vm", Workspaces: ws})
	require.ErrorIs(t, err, agent.ErrInvalidConfig)

	spawn := newSpawn(t, agent.SubAgentConfig{Model: model.Send, Workspaces: ws, ModelChoosesIsolation: true})
	def, _ := llmtoolkit.FindTool(spawn, agent.SpawnToolName)
	assert.Equal(t, []any{"none", "copy"}, def.Parameters["properties"].(map[string]any)["isolation"].(map[string]any)["enum"], "no worktree without git")
	res := llmtoolkit.Execute(t.Context(), spawn, spawnIn("s", "x", "worktree"))
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "isolation")
}
