package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// addSessionTools adds the tools of the legacy (2025-11-25 and earlier)
// scenarios in which a tool reaches its client over the session: log
// messages (mcp.Log), sampling (mcp.CreateMessage) and elicitation
// (mcp.Elicit).
func addSessionTools(f *llmtoolkittest.Fake, empty map[string]any) {
	f.Add(llmtoolkit.MustTool("test_tool_with_logging", "Sends three log messages while it runs", empty),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					select {
					case <-ctx.Done():
						return "", ctx.Err()
					case <-time.After(50 * time.Millisecond):
					}
				}
				if err := mcp.Log(ctx, "info", "test_tool_with_logging", msg); err != nil {
					return "", err
				}
			}
			return "Tool with logging executed successfully", nil
		})
	f.Add(llmtoolkit.MustTool("test_sampling", "Asks the client for an LLM completion", map[string]any{
		"type":       "object",
		"properties": map[string]any{"prompt": map[string]any{"type": "string", "description": "The prompt to send to the LLM"}},
		"required":   []any{"prompt"},
	}), func(ctx context.Context, c llmtoolkit.Call) (string, error) {
		prompt, _ := c.Arguments["prompt"].(string)
		res, err := mcp.CreateMessage(ctx, sample(prompt, 100))
		if err != nil {
			return "", err
		}
		text := "(non-text response)"
		if t, ok := res.Content.(*sdk.TextContent); ok {
			text = t.Text
		}
		return "LLM response: " + text, nil
	})
	f.Add(llmtoolkit.MustTool("test_elicitation", "Asks the client's user for input", map[string]any{
		"type":       "object",
		"properties": map[string]any{"message": map[string]any{"type": "string", "description": "The message to show the user"}},
		"required":   []any{"message"},
	}), func(ctx context.Context, c llmtoolkit.Call) (string, error) {
		message, _ := c.Arguments["message"].(string)
		return elicit(ctx, "User response", message, map[string]any{
			"username": map[string]any{"type": "string", "description": "User's response"},
			"email":    map[string]any{"type": "string", "description": "User's email address"},
		}, "username", "email")
	})
	f.Add(llmtoolkit.MustTool("test_elicitation_sep1034_defaults", "Asks for input with a default for each primitive type (SEP-1034)", empty),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			return elicit(ctx, "Elicitation completed", "Please review and update the form fields with defaults", map[string]any{
				"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
				"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
				"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
				"status":   map[string]any{"type": "string", "description": "User status", "enum": []any{"active", "inactive", "pending"}, "default": "active"},
				"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
			})
		})
	f.Add(llmtoolkit.MustTool("test_elicitation_sep1330_enums", "Asks for input with each enum variant (SEP-1330)", empty),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			return elicit(ctx, "Elicitation completed", "Please select options from the enum fields", map[string]any{
				"untitledSingle": map[string]any{"type": "string", "description": "Select an option",
					"enum": []any{"option1", "option2", "option3"}},
				"titledSingle": map[string]any{"type": "string", "description": "Select a titled option", "oneOf": []any{
					map[string]any{"const": "value1", "title": "First Option"},
					map[string]any{"const": "value2", "title": "Second Option"},
					map[string]any{"const": "value3", "title": "Third Option"},
				}},
				"legacyEnum": map[string]any{"type": "string", "description": "Select a legacy option",
					"enum": []any{"opt1", "opt2", "opt3"}, "enumNames": []any{"Option One", "Option Two", "Option Three"}},
				"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options",
					"items": map[string]any{"type": "string", "enum": []any{"option1", "option2", "option3"}}},
				"titledMulti": map[string]any{"type": "array", "description": "Select multiple titled options",
					"items": map[string]any{"anyOf": []any{
						map[string]any{"const": "value1", "title": "First Choice"},
						map[string]any{"const": "value2", "title": "Second Choice"},
						map[string]any{"const": "value3", "title": "Third Choice"},
					}}},
			})
		})
}

// elicit asks the client's user message with a form of properties and
// reports the answer after prefix.
func elicit(ctx context.Context, prefix, message string, properties map[string]any, required ...string) (string, error) {
	schema := map[string]any{"type": "object", "properties": properties}
	if len(required) > 0 {
		schema["required"] = required
	}
	res, err := mcp.Elicit(ctx, &sdk.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return "", err
	}
	content, err := json.Marshal(res.Content)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: action=%s, content=%s", prefix, res.Action, content), nil
}
