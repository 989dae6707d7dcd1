// Command client is the client the MCP conformance suite
// (@modelcontextprotocol/conformance) tests in its client mode: it
// connects with [mcp.Connect] and uses the remote tools as an agent would,
// through the [mcp.Client] resolver. scripts/conformance.sh runs it as
//
//	conformance client --command "client"
//
// The suite passes the server's URL as the only argument and names the
// scenario in MCP_CONFORMANCE_SCENARIO (its parameters, if any, in
// MCP_CONFORMANCE_CONTEXT).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/llmtoolkit/llmtoolkit/skills"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: client SERVER_URL (the scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[1], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		os.Exit(1)
	}
}

// toolCall is one of the calls a scenario's context asks for.
type toolCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

func run(ctx context.Context, url, scenario, scenarioContext string) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := []mcp.Option{mcp.WithName("llmtoolkit-conformance-client"), mcp.WithVersion("1.0.0"), mcp.WithLogger(log)}
	if scenario == "sep-2322-client-request-state" {
		// The server asks for a confirmation (SEP-2322): the user accepts.
		opts = append(opts, mcp.WithClientOptions(&sdk.ClientOptions{
			Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{}},
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"confirmed": true}}, nil
			},
		}))
	}
	c, err := mcp.Connect(ctx, mcp.HTTPTransport(url, nil), opts...)
	if err != nil {
		return err
	}
	defer c.Close()

	call := func(name string, args map[string]any) {
		if args == nil {
			args = map[string]any{}
		}
		res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{ID: name, Name: name, Arguments: args})
		if res.IsError {
			log.Warn("call failed", slog.String("tool", name), slog.String("error", res.Content))
		}
	}
	switch scenario {
	case "tools_call":
		call("add_numbers", map[string]any{"a": 5, "b": 3})
	case "sep-2322-client-request-state":
		for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			call(name, nil)
		}
	case "http-standard-headers":
		if tools := c.Tools(); len(tools) > 0 {
			call(tools[0].Name, nil)
		}
	case "http-custom-headers":
		var sc struct {
			ToolCalls []toolCall `json:"toolCalls"`
		}
		if scenarioContext != "" {
			if err := json.Unmarshal([]byte(scenarioContext), &sc); err != nil {
				return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
			}
		}
		for _, tc := range sc.ToolCalls {
			call(tc.Name, tc.Arguments)
		}
	case "http-invalid-tool-headers":
		for _, t := range c.Tools() {
			call(t.Name, map[string]any{"region": "us-west1"})
		}
	case "sep-2640-client-no-prefetch":
		// The host lists the server's skills and shows the model their
		// index; no skill is activated, so no file is fetched.
		set, err := skills.NewLoader([]skills.Source{c.Skills()}).Load(ctx)
		if err != nil {
			return err
		}
		if p := set.Problems(); len(p) > 0 {
			return fmt.Errorf("skills refused: %v", p)
		}
		_ = set.Index(0)
	case "sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter":
		// The model activates the listed skill, then reads its reference:
		// a SKILL.md that fails verification is refused, and nothing more
		// of the skill is fetched.
		set, err := skills.NewLoader([]skills.Source{c.Skills()}).Load(ctx)
		if err != nil {
			return err
		}
		tools := skills.NewTools(set)
		for _, sk := range set.Skills() {
			res := llmtoolkit.Execute(ctx, tools, llmtoolkit.Call{ID: "activate", Name: skills.ActivateTool, Arguments: map[string]any{"name": sk.Name}})
			if res.IsError {
				return fmt.Errorf("skill %q refused: %s", sk.Name, res.Content)
			}
			files, _, err := sk.Resources(ctx, 0)
			if err != nil {
				return err
			}
			for _, f := range files {
				res := llmtoolkit.Execute(ctx, tools, llmtoolkit.Call{ID: "read", Name: skills.ReadResourceTool, Arguments: map[string]any{"name": sk.Name, "path": f}})
				if res.IsError {
					return fmt.Errorf("skill %q, file %s refused: %s", sk.Name, f, res.Content)
				}
			}
		}
	case "json-schema-2020-12-preservation":
		t, ok := c.LookupTool("json_schema_2020_12_tool")
		if !ok {
			return fmt.Errorf("tool %q not listed", "json_schema_2020_12_tool")
		}
		call("json_schema_echo", map[string]any{"schema": t.Parameters})
	}
	// initialize, request-metadata, json-schema-ref-no-deref: connecting
	// and listing the tools is the scenario.
	return nil
}
