package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A slow tool run as an MCP task: the call is answered at once with the
// task, which the client polls with tasks/get until its result is in.
// The client here is plain JSON-RPC over HTTP, as any client of the tasks
// extension speaks it.
func ExampleWithTaskTools() {
	report := llmtoolkit.MustTool("build_report", "Builds the monthly report (slow).", map[string]any{"type": "object"})
	tools := (&llmtoolkittest.Fake{}).Add(report, func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		select {
		case <-ctx.Done(): // tasks/cancel ends the context
			return "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		return "report ready", nil
	})
	srv := httptest.NewServer(mcp.Handler(tools,
		mcp.WithTaskTools(map[string]mcp.TaskSupport{"build_report": mcp.TaskOptional})))
	defer srv.Close()

	// post sends one request of the current protocol, declaring the tasks
	// extension, and decodes its result.
	post := func(method, name string, params map[string]any) map[string]any {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    mcp.CurrentProtocolVersion,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "example", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{mcp.TasksExtension: map[string]any{}}},
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", mcp.CurrentProtocolVersion)
		req.Header.Set("Mcp-Method", method)
		req.Header.Set("Mcp-Name", name)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if i := bytes.LastIndex(data, []byte("data: ")); i >= 0 { // an SSE stream: its last event
			data = data[i+len("data: "):]
		}
		var out struct{ Result map[string]any }
		if err := json.Unmarshal(data, &out); err != nil {
			log.Fatal(err)
		}
		return out.Result
	}

	created := post("tools/call", "build_report", map[string]any{"name": "build_report", "arguments": map[string]any{}})
	id := created["taskId"].(string)
	fmt.Println(created["resultType"], created["status"])
	task := post("tasks/get", id, map[string]any{"taskId": id})
	for task["status"] == "working" {
		time.Sleep(20 * time.Millisecond)
		task = post("tasks/get", id, map[string]any{"taskId": id})
	}
	content := task["result"].(map[string]any)["content"].([]any)
	fmt.Println(task["status"], content[0].(map[string]any)["text"])
	// Output:
	// task working
	// completed report ready
}

// A host that follows a task itself: it starts the call as a task, polls
// it by its ID, and cancels another. The task's ID is all it keeps, so a
// host can poll from another goroutine, or after a restart, with a new
// Client.
func ExampleClient_PollTask() {
	obj := map[string]any{"type": "object"}
	tools := (&llmtoolkittest.Fake{}).
		Add(llmtoolkit.MustTool("build_report", "Builds the monthly report (slow).", obj), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			time.Sleep(100 * time.Millisecond)
			return "report ready", nil
		}).
		Add(llmtoolkit.MustTool("reindex", "Rebuilds the search index (very slow).", obj), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			<-ctx.Done() // tasks/cancel ends the context
			return "", ctx.Err()
		})
	srv := httptest.NewServer(mcp.Handler(tools,
		mcp.WithTaskTools(map[string]mcp.TaskSupport{"build_report": mcp.TaskOptional, "reindex": mcp.TaskOptional})))
	defer srv.Close()

	ctx := context.Background()
	client, err := mcp.Connect(ctx, mcp.HTTPTransport(srv.URL, nil), mcp.WithClientTasks())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	started, err := client.StartTask(ctx, llmtoolkit.Call{Name: "build_report"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(started.Status)
	done, err := client.PollTask(ctx, started.ID) // at the server's poll interval
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(done.Status, done.Result.Content[0].(*sdk.TextContent).Text)

	long, err := client.StartTask(ctx, llmtoolkit.Call{Name: "reindex"})
	if err != nil {
		log.Fatal(err)
	}
	stopped, err := client.CancelTask(ctx, long.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(stopped.Status)
	// Output:
	// working
	// completed report ready
	// cancelled
}
