package provider_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// A request body holding an image, written into one buffer of its exact
// size: what json.Marshal writes, without its copies of the base64.
func ExampleMarshalRequest() {
	user := agentloop.UserMessage("What is in this picture?")
	user.Parts = []llmtoolkit.Part{llmtoolkit.ImagePart("image/png", []byte("\x89PNG..."))}
	_, messages, err := provider.AnthropicMessages([]agentloop.Message{user})
	if err != nil {
		fmt.Println(err)
		return
	}
	body, err := provider.MarshalRequest(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": messages})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(body))
	// Output:
	// {"max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":"What is in this picture?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORy4uLg=="}}]}],"model":"claude-sonnet-4-5"}
}

// A request body streamed into an HTTP request through a pipe: the body is
// never held whole, the image's bytes are base64 encoded in chunks as the
// transport reads.
func ExampleWriteRequest() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d bytes", n)
	}))
	defer api.Close()

	user := agentloop.UserMessage("Describe it.")
	user.Parts = []llmtoolkit.Part{llmtoolkit.ImagePart("image/png", make([]byte, 1<<20))}
	input, err := provider.OpenAIResponsesInput([]agentloop.Message{user})
	if err != nil {
		fmt.Println(err)
		return
	}
	pr, pw := io.Pipe()
	go func() {
		// Ends when the body is written, or when the transport closes
		// the read end (a failed request): the write then fails.
		pw.CloseWithError(provider.WriteRequest(pw, map[string]any{"model": "gpt-5", "input": input}))
	}()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, api.URL, pr)
	if err != nil {
		fmt.Println(err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	fmt.Println(string(answer))
	// Output:
	// 1398296 bytes
}
