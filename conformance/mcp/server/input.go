//lint:file-ignore SA1019 the conformance scenarios exercise sampling and roots, deprecated by the 2026-07-28 protocol but still served

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// addInputRequiredTools adds the tools of the input-required scenarios
// (SEP-2322): each asks the client for input with mcp.InputRequired and
// reads the answers with mcp.InputFrom when the call comes back.
func addInputRequiredTools(f *llmtoolkittest.Fake, empty map[string]any) {
	add := func(name, desc string, fn llmtoolkittest.HandlerFunc) {
		f.Add(llmtoolkit.MustTool(name, desc, empty), fn)
	}
	add("test_input_required_result_elicitation", "Asks for the caller's name by elicitation",
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			responses, _ := mcp.InputFrom(ctx)
			if name, _ := accepted(responses, "user_name")["name"].(string); name != "" {
				return fmt.Sprintf("Hello, %s!", name), nil
			}
			return "", mcp.InputRequired(sdk.InputRequestMap{"user_name": askName("What is your name?")}, "")
		})
	add("test_input_required_result_sampling", "Asks for an LLM completion by sampling",
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			responses, _ := mcp.InputFrom(ctx)
			if text, ok := sampled(responses, "capital_question"); ok {
				return "Sampling response: " + text, nil
			}
			return "", mcp.InputRequired(sdk.InputRequestMap{
				"capital_question": sample("What is the capital of France?", 100)}, "")
		})
	add("test_input_required_result_list_roots", "Asks for the client's roots",
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			responses, _ := mcp.InputFrom(ctx)
			if roots, ok := responses["client_roots"].(*sdk.ListRootsResult); ok && roots != nil {
				uris := make([]string, 0, len(roots.Roots))
				for _, r := range roots.Roots {
					uris = append(uris, r.URI)
				}
				return fmt.Sprintf("Client exposed %d root(s): %s", len(roots.Roots), strings.Join(uris, ", ")), nil
			}
			return "", mcp.InputRequired(sdk.InputRequestMap{"client_roots": &sdk.ListRootsParams{}}, "")
		})
	confirm := func(state string) llmtoolkittest.HandlerFunc {
		return func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			responses, got := mcp.InputFrom(ctx)
			if accepted(responses, "confirm") != nil && got == state {
				return "state-ok: requestState received and confirmation accepted", nil
			}
			return "", mcp.InputRequired(sdk.InputRequestMap{"confirm": &sdk.ElicitParams{
				Message: "Please confirm",
				RequestedSchema: &jsonschema.Schema{Type: "object",
					Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}, Required: []string{"ok"}},
			}}, state)
		}
	}
	add("test_input_required_result_request_state", "Remembers a requestState across an elicitation", confirm("request_state"))
	add("test_input_required_result_tampered_state", "Refuses a requestState the client altered (the server signs it)", confirm("tampered_state"))
	add("test_input_required_result_multiple_inputs", "Asks for elicitation, sampling and roots in one round",
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			responses, _ := mcp.InputFrom(ctx)
			name, _ := accepted(responses, "user_name")["name"].(string)
			greeting, greeted := sampled(responses, "greeting")
			roots, rooted := responses["client_roots"].(*sdk.ListRootsResult)
			if name != "" && greeted && rooted && roots != nil {
				return fmt.Sprintf("%s %s — %d root(s) visible", greeting, name, len(roots.Roots)), nil
			}
			return "", mcp.InputRequired(sdk.InputRequestMap{
				"user_name":    askName("What is your name?"),
				"greeting":     sample("Generate a greeting", 50),
				"client_roots": &sdk.ListRootsParams{},
			}, "multiple_inputs")
		})
	add("test_input_required_result_multi_round", "Two elicitation rounds, the state growing, before answering",
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			responses, state := mcp.InputFrom(ctx)
			switch {
			case state == "":
				return "", mcp.InputRequired(sdk.InputRequestMap{"step1": askName("Step 1: What is your name?")}, "round=1")
			case state == "round=1":
				name, _ := accepted(responses, "step1")["name"].(string)
				if name == "" {
					name = "unknown"
				}
				return "", mcp.InputRequired(sdk.InputRequestMap{"step2": &sdk.ElicitParams{
					Message: "Step 2: What is your favorite color?",
					RequestedSchema: &jsonschema.Schema{Type: "object",
						Properties: map[string]*jsonschema.Schema{"color": {Type: "string"}}, Required: []string{"color"}},
				}}, "round=2;name="+name)
			default:
				color, _ := accepted(responses, "step2")["color"].(string)
				if color == "" {
					color = "unknown"
				}
				return fmt.Sprintf("Multi-round complete: %s likes %s", strings.TrimPrefix(state, "round=2;name="), color), nil
			}
		})
	add("test_input_required_result_capabilities", "Asks only for the input the client's capabilities cover",
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			if responses, _ := mcp.InputFrom(ctx); len(responses) > 0 {
				return "Capability-aware input requests fulfilled", nil
			}
			caps := mcp.ClientCapabilitiesFrom(ctx)
			reqs := sdk.InputRequestMap{}
			if caps != nil && caps.Elicitation != nil {
				reqs["user_name"] = askName("What is your name?")
			}
			if caps != nil && caps.Sampling != nil {
				reqs["greeting"] = sample("Generate a short greeting", 50)
			}
			if caps != nil && (caps.RootsV2 != nil || caps.Roots.ListChanged) {
				reqs["client_roots"] = &sdk.ListRootsParams{}
			}
			if len(reqs) == 0 {
				return "No declared client capability supports an in-band input request", nil
			}
			return "", mcp.InputRequired(reqs, "")
		})
}

func askName(message string) *sdk.ElicitParams {
	return &sdk.ElicitParams{Message: message, RequestedSchema: &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}, Required: []string{"name"}}}
}

func sample(prompt string, maxTokens int64) *sdk.CreateMessageParams {
	return &sdk.CreateMessageParams{MaxTokens: maxTokens,
		Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: prompt}}}}
}

// accepted is the content of an elicitation the user accepted, or nil.
func accepted(responses sdk.InputResponseMap, id string) map[string]any {
	r, ok := responses[id].(*sdk.ElicitResult)
	if !ok || r == nil || r.Action != "accept" {
		return nil
	}
	return r.Content
}

// sampled is the first text of a sampling response.
func sampled(responses sdk.InputResponseMap, id string) (string, bool) {
	r, ok := responses[id].(*sdk.CreateMessageWithToolsResult)
	if !ok || r == nil {
		return "", false
	}
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			return t.Text, true
		}
	}
	return "(non-text response)", true
}
