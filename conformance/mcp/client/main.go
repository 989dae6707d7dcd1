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
