package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit"
)

// auditUnknownTools returns the middleware that lets the resolver see a
// call to a tool the server does not serve before the SDK answers it. MCP
// answers such a call with a protocol error (-32602, "unknown tool"), not
// a tool result, and the server keeps that answer; but the call is still
// a call the model made, so it goes through r like any other (a
// trace.Recorder in r records it as a failed call, the tool name and
// arguments as sent). A tool r lists but the server does not serve (its
// schema is not an object) is answered the same way and never run.
func auditUnknownTools(r llmtoolkit.Resolver, served map[string]bool) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			ctr, ok := req.(*sdk.CallToolRequest)
			if !ok || ctr.Params == nil || served[ctr.Params.Name] {
				return next(ctx, method, req)
			}
			if _, listed := llmtoolkit.FindTool(r, ctr.Params.Name); !listed {
				var args map[string]any
				if len(ctr.Params.Arguments) > 0 {
					_ = json.Unmarshal(ctr.Params.Arguments, &args) // a malformed one is still audited, without arguments
				}
				// No tool of that name: Execute only reaches r's wrappers,
				// which see the call and answer unknown tool.
				llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: ctr.Params.Name, Arguments: args})
			}
			return next(ctx, method, req)
		}
	}
}
