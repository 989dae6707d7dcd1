package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskTools is how the tools of the tasks scenarios (SEP-2663) run: as
// tasks when the client declared the extension (slow_compute and the
// others), always (failing_job), or once their input is gathered
// (test_tool_with_task).
var taskTools = map[string]mcp.TaskSupport{
	"slow_compute":        mcp.TaskOptional,
	"failing_job":         mcp.TaskRequired,
	"protocol_error_job":  mcp.TaskOptional,
	"confirm_delete":      mcp.TaskOptional,
	"multi_input":         mcp.TaskOptional,
	"test_tool_with_task": mcp.TaskOnDemand,
}

// addTaskTools adds the tools of the tasks scenarios.
func addTaskTools(f *llmtoolkittest.Fake) {
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	f.Add(llmtoolkit.MustTool("greet", "Greets by name, synchronously", obj(map[string]any{"name": map[string]any{"type": "string"}})),
		func(_ context.Context, c llmtoolkit.Call) (string, error) {
			return fmt.Sprintf("Hello, %v!", c.Arguments["name"]), nil
		})
	f.Add(llmtoolkit.MustTool("slow_compute", "Sleeps for seconds, then answers (a task)", obj(map[string]any{
		"seconds": map[string]any{"type": "number"}, "label": map[string]any{"type": "string"}})),
		func(ctx context.Context, c llmtoolkit.Call) (string, error) {
			seconds, _ := c.Arguments["seconds"].(float64)
			if err := sleep(ctx, time.Duration(seconds*float64(time.Second))); err != nil {
				return "", err
			}
			return fmt.Sprintf("computed %v after %vs", c.Arguments["label"], seconds), nil
		})
	f.Add(llmtoolkit.MustTool("failing_job", "Fails after a second (a task)", obj(map[string]any{})),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			if err := sleep(ctx, time.Second); err != nil {
				return "", err
			}
			return "", errors.New("the job failed, as it always does")
		})
	f.Add(llmtoolkit.MustTool("protocol_error_job", "Panics: a protocol error (a task)", obj(map[string]any{})),
		func(context.Context, llmtoolkit.Call) (string, error) {
			panic("protocol_error_job panics, as the scenario asks")
		})
	f.Add(llmtoolkit.MustTool("confirm_delete", "Asks for a confirmation, then deletes (a task)", obj(map[string]any{
		"filename": map[string]any{"type": "string"}})),
		func(ctx context.Context, c llmtoolkit.Call) (string, error) {
			responses, _ := mcp.InputFrom(ctx)
			if r, ok := responses["confirm"].(*sdk.ElicitResult); ok && r != nil {
				return fmt.Sprintf("%v: %s", c.Arguments["filename"], map[bool]string{true: "deleted", false: "kept"}[r.Action == "accept"]), nil
			}
			return "", mcp.InputRequired(sdk.InputRequestMap{"confirm": confirmRequest(fmt.Sprintf("Delete %v?", c.Arguments["filename"]))}, "")
		})
	f.Add(llmtoolkit.MustTool("multi_input", "Asks two questions at once (a task)", obj(map[string]any{})),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			responses, _ := mcp.InputFrom(ctx)
			if len(responses) >= 2 {
				return fmt.Sprintf("got %d answers", len(responses)), nil
			}
			return "", mcp.InputRequired(sdk.InputRequestMap{
				"first": askName("First: your name?"), "second": confirmRequest("Second: confirm?")}, "")
		})
	f.Add(llmtoolkit.MustTool("test_tool_with_task", "Asks for a name, then goes on as a task", obj(map[string]any{})),
		func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			responses, _ := mcp.InputFrom(ctx)
			name, _ := accepted(responses, "user_name")["name"].(string)
			switch {
			case name == "":
				return "", mcp.InputRequired(sdk.InputRequestMap{"user_name": askName("What is your name?")}, "")
			case mcp.TaskIDFrom(ctx) == "":
				return "", mcp.ErrRunAsTask
			}
			if err := sleep(ctx, 200*time.Millisecond); err != nil {
				return "", err
			}
			return fmt.Sprintf("Hello, %s! (from a task)", name), nil
		})
}

func confirmRequest(message string) *sdk.ElicitParams {
	return &sdk.ElicitParams{Message: message, RequestedSchema: &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"confirm": {Type: "boolean"}}, Required: []string{"confirm"}}}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
