//go:build linux

package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// TestScriptedRunRewindsEveryTurn drives agentloop with a scripted model
// whose every turn changes the tree through a different tool: write_file,
// edit_file, multi_edit, apply_patch, bash's sed -i, rm -r, a background
// job writing a file, mv, chmod, ln -s, and a sub-agent's write_file. The independent
// walker (filepath.WalkDir) digests the tree as each turn begins (when
// the model is called); rewinding to each turn's checkpoint gives that
// digest, and rewinding forward gives the end state back. The history is
// cut at the same turn.
func TestScriptedRunRewindsEveryTurn(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"src/app.go":     "package app\n\nconst Name = \"old\"\n",
		"src/util.go":    "package app\n\nfunc helper() int { return 1 }\n",
		"build/out/a.o":  "object",
		"build/out/b.o":  "object",
		"docs/guide.md":  "# Guide\n",
		"scripts/run.sh": "#!/bin/sh\necho run\n",
	})
	tools, err := codetools.New(root, codetools.WithApplyPatch(), codetools.WithBackgroundJobs())
	require.NoError(t, err)
	defer tools.Close()
	store, err := checkpoint.NewStore(openSQLite(t))
	require.NoError(t, err)
	c, err := checkpoint.New(store, root)
	require.NoError(t, err)

	bash := func(cmd string) llmtoolkit.Call {
		return llmtoolkittest.Call("bash", map[string]any{"command": cmd})
	}
	steps := []llmtoolkit.Call{
		llmtoolkittest.Call("write_file", map[string]any{"path": "notes.txt", "content": "first\nsecond\n"}),
		llmtoolkittest.Call("edit_file", map[string]any{"path": "src/app.go", "oldText": `"old"`, "newText": `"new"`}),
		llmtoolkittest.Call("multi_edit", map[string]any{"path": "notes.txt", "edits": []any{
			map[string]any{"oldText": "first", "newText": "1st"},
			map[string]any{"oldText": "second", "newText": "2nd"},
		}}),
		llmtoolkittest.Call("apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: patched.txt\n+patched\n" +
			"*** Update File: src/util.go\n@@\n-package app\n+package app // patched\n*** End Patch\n"}),
		bash(`sed -i 's/return 1/return 2/' src/util.go`),
		bash(`rm -r build`),
		llmtoolkittest.Call("bash", map[string]any{"command": `printf bg > bg.tmp && mv bg.tmp bg.txt`, "run_in_background": true}),
		bash(`mv docs/guide.md docs/manual.md`),
		bash(`chmod 700 scripts/run.sh`),
		bash(`ln -s src/app.go app-link`),
		llmtoolkittest.Call("spawn_agent", map[string]any{"task": "write sub.txt"}),
	}
	var digests []string // digests[i]: as turn i+1 begins
	var turns []llmtoolkittest.Turn
	for i, call := range steps {
		call.ID = fmt.Sprintf("call_%d", i+1)
		turns = append(turns, llmtoolkittest.Respond(func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
			if i > 0 && steps[i-1].Arguments["run_in_background"] == true {
				// The background job writes after its turn: wait for it.
				deadline := time.Now().Add(10 * time.Second)
				for _, err := os.Stat(filepath.Join(root, "bg.txt")); err != nil && time.Now().Before(deadline); _, err = os.Stat(filepath.Join(root, "bg.txt")) {
					time.Sleep(10 * time.Millisecond)
				}
			}
			digests = append(digests, treeDigest(t, root))
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{call}, StopReason: "tool_calls"}, nil
		}))
	}
	turns = append(turns, llmtoolkittest.Reply("done"))
	model := llmtoolkittest.NewScriptedModel(t, turns...)
	tenant, conv := uuid.NewString(), uuid.NewString()
	rctx := llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"tenant_id": tenant, "conversation_id": conv} })
	child := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkittest.Call("write_file", map[string]any{"path": "sub/sub.txt", "content": "from the sub-agent\n"})),
		llmtoolkittest.Reply("written"))
	spawn, err := agent.SpawnAgent(agent.SubAgentConfig{Model: child.Send, Tools: tools, AllowMutating: true})
	require.NoError(t, err)
	r := checkpoint.Resolver(llmtoolkit.Compose(tools, spawn), c)
	_, history, err := agentloop.Run(rctx, []agentloop.Message{agentloop.UserMessage("change the tree")}, model.Send,
		agentloop.Options{Resolver: r, MaxParallel: 1, MaxIterations: 20})
	require.NoError(t, err)
	for _, m := range history {
		if m.Role == agentloop.RoleTool {
			assert.False(t, m.IsError, "%s: %s", m.ToolName, m.Content)
		}
	}
	assert.Zero(t, checkpoint.Failures(r))
	end, err := c.Save(rctx, checkpoint.KindManual, "")
	require.NoError(t, err)
	endDigest := treeDigest(t, root)

	list, err := c.List(ctx, checkpoint.Filter{ConversationID: conv})
	require.NoError(t, err)
	var byTurn []checkpoint.Checkpoint
	for _, cp := range list {
		if cp.Kind == checkpoint.KindTurn && cp.AgentID == "" {
			byTurn = append(byTurn, cp)
		}
	}
	sort.Slice(byTurn, func(i, j int) bool { return byTurn[i].Iteration < byTurn[j].Iteration })
	require.Len(t, byTurn, len(steps))
	require.Len(t, digests, len(steps))
	for i, cp := range byTurn {
		assert.Equal(t, i+1, cp.Iteration)
		assert.Equal(t, tenant, cp.TenantID)
		assert.Equal(t, fmt.Sprintf("call_%d", i+1), cp.CallID)
	}
	// The background job (call_7) wrote after its turn: the next turn's
	// checkpoint holds its file and names its call among the writers.
	assert.Empty(t, byTurn[6].Jobs, "no job ran before turn 7")
	assert.Equal(t, []string{"call_7"}, byTurn[7].Jobs)
	jobChanges, _, err := c.Diff(ctx, byTurn[6].ID, byTurn[7].ID)
	require.NoError(t, err)
	var jobPaths []string
	for _, ch := range jobChanges {
		jobPaths = append(jobPaths, ch.Op+" "+ch.Path)
	}
	assert.Contains(t, jobPaths, "added bg.txt")
	// Back to every turn, newest first, then forward again.
	for i := len(byTurn) - 1; i >= 0; i-- {
		res, err := c.Rewind(ctx, byTurn[i].ID, checkpoint.RewindOptions{})
		require.NoError(t, err)
		assert.True(t, res.Exact)
		assert.Equal(t, digests[i], treeDigest(t, root), "rewound to turn %d (%s)", i+1, steps[i].Name)
	}
	fwd, err := c.Rewind(ctx, end.ID, checkpoint.RewindOptions{})
	require.NoError(t, err)
	assert.True(t, fwd.Exact)
	assert.Equal(t, endDigest, treeDigest(t, root))
	info, err := os.Lstat(filepath.Join(root, "app-link"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, info.Mode().Type())
	data, err := os.ReadFile(filepath.Join(root, "sub/sub.txt"))
	require.NoError(t, err)
	assert.Equal(t, "from the sub-agent\n", string(data))

	cut, ok := checkpoint.CutHistory(history, byTurn[2])
	require.True(t, ok)
	// The prompt, then two turns of an assistant message and its result.
	require.Len(t, cut, 5)
	assert.Equal(t, agentloop.RoleTool, cut[len(cut)-1].Role)
}

// TestResumedTurnHasOneCheckpoint: the same run id, agent and iteration
// (a turn replayed by a durable engine after a crash) give one checkpoint.
func TestResumedTurnHasOneCheckpoint(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"f": "1"})
	store, err := checkpoint.NewStore(openSQLite(t))
	require.NoError(t, err)
	c, err := checkpoint.New(store, root)
	require.NoError(t, err)
	inner := llmtoolkit.ResolverFunc(func(context.Context, llmtoolkit.Call) (string, error) {
		return "ok", os.WriteFile(filepath.Join(root, "f"), []byte(uuid.NewString()), 0o644)
	})
	run := llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.RunID = "run-1" })
	for range 2 { // the first attempt, then the resumed one
		r := checkpoint.Resolver(inner, c)
		_, err := r.Resolve(llmtoolkit.WithScope(run, func(sc *llmtoolkit.Scope) { sc.StartTurn(4) }), llmtoolkit.Call{ID: "c1", Name: "write"})
		require.NoError(t, err)
	}
	list, err := c.List(ctx, checkpoint.Filter{})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, 4, list[0].Iteration)
}
