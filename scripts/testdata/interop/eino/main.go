// Command eino checks that llmtoolkit's core builds and runs beside
// cloudwego/eino in one module: an eino tool answers through
// llmtoolkit.Execute, recorded by trace in SQLite. scripts/interop.sh runs it
// in a scratch module that requires the newest eino.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cloudwego/eino/components/tool/utils"

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
		fmt.Fprintln(os.Stderr, "eino interop:", err)
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

	tool, err := utils.InferTool("weather", "Current weather for a city.",
		func(ctx context.Context, in weatherArgs) (string, error) {
			var args map[string]any
			raw, _ := json.Marshal(in)
			if err := json.Unmarshal(raw, &args); err != nil {
				return "", err
			}
			res := llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{ID: "c1", Name: "weather", Arguments: args})
			if res.IsError {
				return "", fmt.Errorf("%s", res.Content)
			}
			return res.Content, nil
		})
	if err != nil {
		return err
	}
	ctx = llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) {
		sc.Session = map[string]any{"tenant_id": "123e4567-e89b-12d3-a456-426614174000", "conversation_id": "123e4567-e89b-12d3-a456-426614174001"}
	})
	out, err := tool.InvokableRun(ctx, `{"city":"Lisbon"}`)
	if err != nil {
		return err
	}
	var answer string
	if err := json.Unmarshal([]byte(out), &answer); err != nil {
		answer = out
	}
	if answer != "sunny in Lisbon" {
		return fmt.Errorf("the tool answered %q, want %q", out, "sunny in Lisbon")
	}
	fmt.Println("eino interop: tool call answered:", answer)
	return nil
}
