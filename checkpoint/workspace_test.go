//go:build linux

package checkpoint_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

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

// TestCheckpointsInsideAWorkspace: a sub-agent working in a copy has its
// own checkpoints, of its workspace (rooted there, attributed to it),
// which rewind it there and never touch the parent's tree; the apply of
// its changes is recorded in the parent's checkpoints as the change of
// the spawn_agent call (between the checkpoint before that call and the
// next one), and rewinding the parent's to before it undoes the apply.
func TestCheckpointsInsideAWorkspace(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	writeFiles(t, root, map[string]string{"main.go": "package main\n", "README": "readme\n"})

	store, err := checkpoint.NewStore(openSQLite(t))
	require.NoError(t, err)
	parentCP, err := checkpoint.New(store, root)
	require.NoError(t, err)

	var subCP *checkpoint.Checkpointer
	var wsRoot string
	var inDecide func(r agent.WorkspaceResult)
	ws, err := agent.NewWorkspaces(ctx, agent.WorkspaceConfig{
		Root: root, Dir: filepath.Join(t.TempDir(), "workspaces"),
		// The host's factory: codetools in the workspace, checkpointed there.
		Tools: func(_ context.Context, w agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
			ct, err := codetools.New(w.Root)
			if err != nil {
				return nil, nil, err
			}
			c, err := checkpoint.New(store, w.Root)
			if err != nil {
				return nil, nil, err
			}
			subCP, wsRoot = c, w.Root
			// The file tools only: a bash nothing sandboxes is refused in a workspace.
			files := llmtoolkit.Filter(ct, func(t llmtoolkit.Tool) bool { return t.Commands == nil })
			return checkpoint.Resolver(files, c, checkpoint.WithRequired()), ct, nil
		},
		Decide: func(_ context.Context, r agent.WorkspaceResult) agent.WorkspaceAction {
			inDecide(r)
			return agent.ActionApply
		},
	})
	require.NoError(t, err)
	defer func() { require.NoError(t, ws.Close()) }()

	child := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkit.Call{ID: "w1", Name: "write_file", Arguments: map[string]any{"path": "notes.txt", "content": "draft\n"}}),
		llmtoolkittest.CallTools(llmtoolkit.Call{ID: "w2", Name: "write_file", Arguments: map[string]any{"path": "notes.txt", "content": "final\n"}},
			llmtoolkit.Call{ID: "w3", Name: "write_file", Arguments: map[string]any{"path": "main.go", "content": "package main // edited\n"}}),
		llmtoolkittest.Reply("written"))
	spawn, err := agent.SpawnAgent(agent.SubAgentConfig{Model: child.Send, Workspaces: ws, Isolation: agent.IsolationCopy,
		AllowMutating: true, NewID: func() string { return "sub-1" }})
	require.NoError(t, err)
	parentTools, err := codetools.New(root)
	require.NoError(t, err)
	defer parentTools.Close()

	tenant, conv := uuid.NewString(), uuid.NewString()
	rctx := llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"tenant_id": tenant, "conversation_id": conv} })
	inDecide = func(r agent.WorkspaceResult) {
		// Inside the workspace: one checkpoint per turn of the sub-agent,
		// of the workspace, attributed to it.
		list, err := subCP.List(ctx, checkpoint.Filter{ConversationID: conv})
		require.NoError(t, err)
		var turns []checkpoint.Checkpoint
		for _, cp := range list {
			if cp.Kind == checkpoint.KindTurn {
				turns = append(turns, cp)
			}
		}
		sort.Slice(turns, func(i, j int) bool { return turns[i].Iteration < turns[j].Iteration })
		require.Len(t, turns, 2)
		for i, cp := range turns {
			assert.Equal(t, wsRoot, cp.Root)
			assert.Equal(t, "sub-1", cp.AgentID)
			assert.Equal(t, i+1, cp.Iteration)
		}
		changes, _, err := subCP.Diff(ctx, turns[0].ID, turns[1].ID)
		require.NoError(t, err)
		assert.Equal(t, []string{"added notes.txt"}, ops(changes))
		// Rewound to its second turn: the draft, in the workspace only.
		res, err := subCP.Rewind(ctx, turns[1].ID, checkpoint.RewindOptions{})
		require.NoError(t, err)
		assert.True(t, res.Exact)
		assert.Equal(t, "draft\n", string(must(os.ReadFile(filepath.Join(wsRoot, "notes.txt")))))
		assert.Equal(t, "package main\n", string(must(os.ReadFile(filepath.Join(wsRoot, "main.go")))))
		assert.NoFileExists(t, filepath.Join(root, "notes.txt"), "the parent's tree is untouched until the apply")
		assert.Equal(t, "package main\n", string(must(os.ReadFile(filepath.Join(root, "main.go")))))
		assert.Equal(t, []string{"main.go", "notes.txt"}, r.Files, "Decide saw the diff before the rewind")
	}

	parent := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkit.Call{ID: "s1", Name: agent.SpawnToolName, Arguments: map[string]any{"task": "write the notes"}}),
		llmtoolkittest.CallTools(llmtoolkit.Call{ID: "p2", Name: "write_file", Arguments: map[string]any{"path": "after.txt", "content": "after\n"}}),
		llmtoolkittest.Reply("done"))
	r := checkpoint.Resolver(llmtoolkit.Compose(parentTools, spawn), parentCP, checkpoint.WithRequired())
	_, history, err := agentloop.Run(rctx, []agentloop.Message{agentloop.UserMessage("go")}, parent.Send, agentloop.Options{Resolver: r, MaxIterations: 5})
	require.NoError(t, err)
	for _, m := range history {
		if m.Role == agentloop.RoleTool {
			assert.False(t, m.IsError, m.Content)
		}
	}
	assert.Equal(t, "draft\n", string(must(os.ReadFile(filepath.Join(root, "notes.txt")))), "the rewound workspace was applied")

	list, err := parentCP.List(ctx, checkpoint.Filter{ConversationID: conv})
	require.NoError(t, err)
	byCall := map[string]checkpoint.Checkpoint{}
	for _, cp := range list {
		if cp.Kind == checkpoint.KindTurn && cp.Root == root {
			byCall[cp.CallID] = cp
		}
	}
	require.Contains(t, byCall, "s1")
	require.Contains(t, byCall, "p2")
	assert.Empty(t, byCall["s1"].AgentID, "the parent's own checkpoints")
	changes, _, err := parentCP.Diff(ctx, byCall["s1"].ID, byCall["p2"].ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"added notes.txt"}, withoutPatches(ops(changes)), "the spawn_agent call's change is the apply")

	res, err := parentCP.Rewind(ctx, byCall["s1"].ID, checkpoint.RewindOptions{})
	require.NoError(t, err)
	// The patch folder holds the sub-agent's patch, which its .gitignore
	// keeps out of the checkpoints: the rewind keeps the folder, and says so.
	require.Len(t, res.Skipped, 1, "%+v", res)
	assert.Equal(t, ".llmtoolkit", res.Skipped[0].Path)
	assert.NoFileExists(t, filepath.Join(root, "notes.txt"), "rewinding the parent undoes the apply")
	assert.NoFileExists(t, filepath.Join(root, "after.txt"))
	assert.Equal(t, "package main\n", string(must(os.ReadFile(filepath.Join(root, "main.go")))))
	assert.Equal(t, "readme\n", string(must(os.ReadFile(filepath.Join(root, "README")))))
}

func ops(changes []checkpoint.Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Op+" "+c.Path)
	}
	sort.Strings(out)
	return out
}

// withoutPatches drops the patch folder agent writes the sub-agent's
// patch in (.llmtoolkit, which its own .gitignore ignores).
func withoutPatches(ops []string) []string {
	var out []string
	for _, o := range ops {
		if _, p, _ := strings.Cut(o, " "); p != ".llmtoolkit" && !strings.HasPrefix(p, ".llmtoolkit/") {
			out = append(out, o)
		}
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
