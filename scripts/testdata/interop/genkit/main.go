// Command genkit checks that llmtoolkit's core builds and runs beside
// firebase/genkit in one module: a genkit tool answers through
// llmtoolkit.Execute, recorded by trace in SQLite. scripts/interop.sh runs it
// in a scratch module that requires the newest genkit.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/llmtoolkit/llmtoolkit"
	_ "github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
	_ "github.com/llmtoolkit/llmtoolkit/mcp"
	_ "github.com/llmtoolkit/llmtoolkit/provider"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

type weatherArgs struct {
	City string `json:"city" jsonschema:"City name, like Lisbon."`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genkit interop:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	domain, err := agentresolver.New(agentresolver.Func("weather", "Current weather for a city.",
		func(ctx context.Context, a weatherArgs) (string, error) { return "sunny in " + a.City, nil }))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "interop")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := trace.OpenSQLite(filepath.Join(dir, "traces.db"))
	if err != nil {
		return err
	}
	if err := trace.Migrate(db); err != nil {
		return err
	}
	rec := trace.Record(domain, db)
	defer rec.Close()
	def, ok := llmtoolkit.FindTool(rec, "weather")
	if !ok {
		return fmt.Errorf("no weather tool")
	}

	g := genkit.Init(ctx)
	tool := genkit.DefineTool(g, def.Name, def.Description,
		func(tc *ai.ToolContext, in any) (string, error) {
			args, ok := in.(map[string]any)
			if !ok {
				return "", fmt.Errorf("the arguments are a %T, not an object", in)
			}
			res := llmtoolkit.Execute(tc.Context, rec, llmtoolkit.Call{ID: "c1", Name: def.Name, Arguments: args})
			if res.IsError {
				return "", fmt.Errorf("%s", res.Content)
			}
			return res.Content, nil
		}, ai.WithInputSchema(def.Parameters))
	ctx = llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) {
		sc.Session = map[string]any{"tenant_id": "123e4567-e89b-12d3-a456-426614174000", "conversation_id": "123e4567-e89b-12d3-a456-426614174001"}
	})
	out, err := tool.RunRaw(ctx, map[string]any{"city": "Lisbon"})
	if err != nil {
		return err
	}
	if out != "sunny in Lisbon" {
		return fmt.Errorf("the tool answered %v, want %q", out, "sunny in Lisbon")
	}
	fmt.Println("genkit interop: tool call answered:", out)
	return nil
}
