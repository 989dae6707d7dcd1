package agent_test

import (
	"context"
	"fmt"
	"os"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// A rule on bash's command holds for every tool that runs a command:
// here exec_command, the terminal tool, is refused what bash would be.
func ExampleBashToolName() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	code, _ := codetools.New(dir, codetools.WithTerminals())
	defer code.Close()
	perms, _ := agent.New(agent.Config{
		Mode: agent.ModeBypass,
		Deny: []agent.Rule{{Tool: agent.BashToolName, Argument: agent.BashCommandArgument, Regexp: `\bgit\s+push\b`}},
	})
	res := llmtoolkit.Execute(context.Background(), perms.Guard(code),
		llmtoolkit.Call{Name: "exec_command", Arguments: map[string]any{"cmd": "git push --force"}})
	fmt.Println(res.Content)
	// Output:
	// permission denied: tool "exec_command" was not run: the host's rule bash(command regexp "\\bgit\\s+push\\b") forbids the command this call runs
}
