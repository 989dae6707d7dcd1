// Command openai runs the agent loop against the OpenAI Chat Completions API
// or the Responses API, with plain net/http and package provider: no SDK.
//
//	OPENAI_API_KEY=sk-... go run ./examples/openai "What is 17.5 + 24.25, and what time is it in Tokyo?"
//	OPENAI_API=responses OPENAI_MODEL=o4-mini OPENAI_API_KEY=sk-... go run ./examples/openai
//
// OPENAI_API picks the API: "chat" (Chat Completions, the default) or
// "responses" (the Responses API: strict tools where the schema allows,
// reasoning items kept across turns with store false and
// include ["reasoning.encrypted_content"]). OPENAI_MODEL picks the model
// (default gpt-4o-mini) and OPENAI_BASE_URL an OpenAI-compatible server
// (default https://api.openai.com/v1). Without OPENAI_API_KEY it says what
// it would do and exits.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "openai:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	question := "What is 17.5 + 24.25, and what time is it in Tokyo?"
	if len(args) > 0 {
		question = strings.Join(args, " ")
	}
	tools := exampleTools{}
	api := orDefault(getenv("OPENAI_API"), "chat")
	if api != "chat" && api != "responses" {
		return fmt.Errorf("OPENAI_API is %q; use \"chat\" (Chat Completions) or \"responses\" (the Responses API)", api)
	}
	key := getenv("OPENAI_API_KEY")
	if key == "" {
		fmt.Fprintln(out, "OPENAI_API_KEY is not set, so this example makes no request.")
		fmt.Fprintln(out, "With a key it would ask the model:", question)
		var data []byte
		if api == "responses" {
			fmt.Fprint(out, "offering these tools (Responses API format):\n")
			data, _ = json.MarshalIndent(responsesTools(tools.Tools()), "", "  ")
		} else {
			fmt.Fprint(out, "offering these tools (Chat Completions format):\n")
			data, _ = json.MarshalIndent(provider.OpenAITools(tools.Tools()), "", "  ")
		}
		fmt.Fprintln(out, string(data))
		fmt.Fprintln(out, "and run the tool calls it makes with agentloop.Run until it answers.")
		return nil
	}
	client := &chatClient{
		http:    &http.Client{Timeout: 2 * time.Minute},
		baseURL: strings.TrimSuffix(orDefault(getenv("OPENAI_BASE_URL"), "https://api.openai.com/v1"), "/"),
		key:     key,
		model:   orDefault(getenv("OPENAI_MODEL"), "gpt-4o-mini"),
	}
	send := client.send
	if api == "responses" {
		send = client.sendResponses
	}
	resp, _, err := agentloop.Run(ctx,
		[]agentloop.Message{
			agentloop.SystemMessage("Answer briefly. Use the tools for arithmetic and for the time."),
			agentloop.UserMessage(question),
		},
		send,
		agentloop.Options{
			Resolver:      tools,
			MaxIterations: 5,
			OnEvent: func(e agentloop.Event) {
				switch e.Kind {
				case agentloop.EventToolCall:
					args, _ := json.Marshal(e.Call.Arguments)
					fmt.Fprintf(out, "-> %s %s\n", e.Call.Name, args)
				case agentloop.EventToolResult:
					fmt.Fprintf(out, "<- %s (error=%v)\n", e.Result.Content, e.Result.IsError)
				}
			},
		})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, resp.Content)
	fmt.Fprintf(out, "(%d input and %d output tokens in the last call)\n", resp.Usage.InputTokens, resp.Usage.OutputTokens)
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// chatClient is an agentloop.SendFunc over the Chat Completions API.
type chatClient struct {
	http    *http.Client
	baseURL string
	key     string
	model   string
}

func (c *chatClient) send(ctx context.Context, history []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
	messages, err := provider.OpenAIMessages(history)
	if err != nil {
		return agentloop.Response{}, err
	}
	data, err := c.post(ctx, "/chat/completions", map[string]any{
		"model":    c.model,
		"messages": messages,
		"tools":    provider.OpenAITools(tools),
	})
	if err != nil {
		return agentloop.Response{}, err
	}
	return provider.OpenAIResponse(data)
}

// sendResponses is an agentloop.SendFunc over the Responses API. Nothing is
// stored server-side: the reasoning items come back encrypted, ride along
// in the history (agentloop.Message.Provider) and are sent again.
func (c *chatClient) sendResponses(ctx context.Context, history []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
	input, err := provider.OpenAIResponsesInput(history)
	if err != nil {
		return agentloop.Response{}, err
	}
	data, err := c.post(ctx, "/responses", map[string]any{
		"model":   c.model,
		"input":   input,
		"tools":   responsesTools(tools),
		"store":   false,
		"include": []string{"reasoning.encrypted_content"},
	})
	if err != nil {
		return agentloop.Response{}, err
	}
	resp, err := provider.OpenAIResponsesResponse(data)
	if err != nil {
		return agentloop.Response{}, err
	}
	// Strict tools get null for an optional argument left out: drop those
	// nulls so that the arguments validate against the tool's own schema.
	for i, call := range resp.ToolCalls {
		for _, t := range tools {
			if t.Name == call.Name {
				resp.ToolCalls[i].Arguments = provider.OpenAIStrictArguments(t.Parameters, call.Arguments)
			}
		}
	}
	return resp, nil
}

// responsesTools offers each tool in strict mode when its schema allows,
// and as it is otherwise.
func responsesTools(tools []llmtoolkit.Tool) []provider.OpenAIResponsesTool {
	out := provider.OpenAIResponsesTools(tools)
	for i, t := range tools {
		if strict, err := provider.OpenAIResponsesStrictTool(t); err == nil {
			out[i] = strict
		}
	}
	return out
}

// post sends one JSON request and returns the body of a 200 answer. The
// body is what json.Marshal writes, with the base64 of the images the
// tools attach written once (provider.MarshalRequest).
func (c *chatClient) post(ctx context.Context, path string, payload any) ([]byte, error) {
	body, err := provider.MarshalRequest(payload)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 10<<20))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST %s: %s: %s", path, res.Status, bytes.TrimSpace(data))
	}
	return data, nil
}

// exampleTools offers two tools: add and current_time.
type exampleTools struct{}

var (
	addTool = llmtoolkit.MustTool("add", "Adds numbers and returns the sum.", map[string]any{
		"type": "object",
		"properties": map[string]any{
			"numbers": map[string]any{"type": "array", "items": map[string]any{"type": "number"}, "description": "The numbers to add."},
		},
		"required": []any{"numbers"},
	})
	timeTool = llmtoolkit.MustTool("current_time", "Returns the current date and time in an IANA time zone.", map[string]any{
		"type": "object",
		"properties": map[string]any{
			"timezone": map[string]any{"type": "string", "description": "IANA time zone, for example Asia/Tokyo."},
		},
		"required": []any{"timezone"},
	})
)

func (exampleTools) Tools() []llmtoolkit.Tool { return []llmtoolkit.Tool{addTool, timeTool} }

func (exampleTools) Resolve(_ context.Context, call llmtoolkit.Call) (string, error) {
	switch call.Name {
	case "add":
		sum := 0.0
		for _, n := range call.Arguments["numbers"].([]any) {
			sum += n.(float64) // the schema was validated by llmtoolkit.Execute
		}
		return fmt.Sprint(sum), nil
	case "current_time":
		loc, err := time.LoadLocation(call.Arguments["timezone"].(string))
		if err != nil {
			return "", errors.New("unknown time zone; use an IANA name such as Europe/Paris")
		}
		return time.Now().In(loc).Format(time.RFC1123), nil
	}
	return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
}
