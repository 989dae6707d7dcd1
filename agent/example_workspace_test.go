package agent_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// A sub-agent edits a copy of the project; the host applies its changes
// when it ends (a three-way merge, whole or not at all).
func ExampleNewWorkspaces() {
	project, _ := os.MkdirTemp("", "project-")
	defer os.RemoveAll(project)
	_ = os.WriteFile(filepath.Join(project, "notes.txt"), []byte("draft\n"), 0o644)
	scratch, _ := os.MkdirTemp("", "workspaces-")
	defer os.RemoveAll(scratch)

	ctx := context.Background()
	ws, err := agent.NewWorkspaces(ctx, agent.WorkspaceConfig{
		Root: project,
		Dir:  scratch, // where the copies live; a crashed host's are removed here at the next start
		Tools: func(_ context.Context, w agent.Workspace) (llmtoolkit.Resolver, io.Closer, error) {
			// bash in the sandbox: it sees and writes only the workspace
			// (NewWorkspaces refuses a bash nothing confines).
			ct, err := codetools.New(w.Root, codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite}))
			return ct, ct, err
		},
		Decide: func(context.Context, agent.WorkspaceResult) agent.WorkspaceAction { return agent.ActionApply },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ws.Close() // removes what is neither applied nor kept

	sub := lt.NewScriptedModel(exampleTB{},
		lt.CallTools(llmtoolkit.Call{ID: "w", Name: "write_file", Arguments: map[string]any{"path": "notes.txt", "content": "final\n"}}),
		lt.Reply("notes.txt is final"))
	spawn, _ := agent.SpawnAgent(agent.SubAgentConfig{Model: sub.Send, Workspaces: ws, Isolation: agent.IsolationCopy, AllowMutating: true})

	res := llmtoolkit.Execute(ctx, spawn, llmtoolkit.Call{ID: "s", Name: agent.SpawnToolName, Arguments: map[string]any{"task": "Finish the notes."}})
	p := res.Display.Payload.(agent.SubAgentPayload)
	fmt.Println(p.Isolation, p.Files, p.Outcome)
	b, _ := os.ReadFile(filepath.Join(project, "notes.txt"))
	fmt.Print(string(b))
	// Output:
	// copy 1 applied
	// final
}
