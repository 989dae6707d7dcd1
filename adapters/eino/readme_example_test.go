package eino_test

import (
	"context"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"

	"github.com/llmtoolkit/llmtoolkit/codetools"

	eino "github.com/llmtoolkit/llmtoolkit/adapters/eino"
)

// The README's eino snippet (examples/readme checks the copy): the code
// tools in an eino ReAct agent.
func Example_readme() {
	ctx, dir := context.Background(), "path/to/project"
	var m model.ToolCallingChatModel = &scriptedModel{}
	// readme:begin react
	ct, _ := codetools.New(dir)
	tools, _ := eino.Tools(ctx, ct) // []tool.BaseTool: same names, descriptions, schemas
	agent, _ := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: m,
		ToolsConfig: compose.ToolsNodeConfig{Tools: tools, UnknownToolsHandler: eino.UnknownTools(ct)}})
	// readme:end
	_ = agent
}
