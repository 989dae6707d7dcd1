// Command quickstart shows the core of llmtoolkit: define a tool, compose
// resolvers, and execute the calls a model makes.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	shout, err := llmtoolkit.NewTool("shout", "Returns the text in capital letters.", map[string]any{
		"type":       "object",
		"properties": map[string]any{"text": map[string]any{"type": "string", "description": "Text to shout."}},
		"required":   []any{"text"},
	})
	if err != nil {
		return err
	}
	tools := &staticResolver{tool: shout}
	r := llmtoolkit.Compose(tools)

	// The calls a model might make: one good, one with bad arguments, one
	// for a tool that does not exist.
	for _, raw := range []struct{ name, args string }{
		{"shout", `{"text": "hello, tools"}`},
		{"shout", `{"text": 42}`},
		{"whisper", `{}`},
	} {
		call, err := llmtoolkit.ParseCall("call-1", raw.name, raw.args)
		if err != nil {
			return err
		}
		res := llmtoolkit.Execute(ctx, r, call)
		fmt.Printf("%s(%s) -> error=%v: %s\n", raw.name, raw.args, res.IsError, res.Content)
	}
	return nil
}

type staticResolver struct{ tool llmtoolkit.Tool }

func (s *staticResolver) Tools() []llmtoolkit.Tool { return []llmtoolkit.Tool{s.tool} }

func (s *staticResolver) Resolve(_ context.Context, call llmtoolkit.Call) (string, error) {
	if call.Name != s.tool.Name {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	text, _ := call.Arguments["text"].(string)
	return strings.ToUpper(text), nil
}
