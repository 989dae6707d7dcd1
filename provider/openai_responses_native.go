package provider

// The Responses API's client-executed tools whose shapes its models were
// trained on: apply_patch and shell. Declared as {"type": "apply_patch"}
// and {"type": "shell"}, called with apply_patch_call and shell_call items,
// answered with apply_patch_call_output and shell_call_output items.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
)

// The Responses API's native tool types a tool's [llmtoolkit.Tool.Native]
// names as "openai/TYPE" (codetools' NativeApplyPatch and NativeShell).
const (
	// OpenAIResponsesApplyPatchType is the apply_patch tool: each
	// apply_patch_call is read as a call of the tool named "apply_patch"
	// with one argument, "patch": the call's operation as a V4A patch
	// ("*** Begin Patch", "*** Add File: P", "*** Update File: P" or
	// "*** Delete File: P" with the operation's diff, "*** End Patch").
	OpenAIResponsesApplyPatchType = "apply_patch"
	// OpenAIResponsesShellType is the shell tool: each shell_call is read as
	// a call of the tool named "shell" with the call's action as its
	// arguments ("commands", and "timeout_ms" and "max_output_length" when
	// the model set them).
	OpenAIResponsesShellType = "shell"
)

// Item types of the native tools' calls and answers.
const (
	itemApplyPatchCall       = "apply_patch_call"
	itemApplyPatchCallOutput = "apply_patch_call_output"
	itemShellCall            = "shell_call"
	itemShellCallOutput      = "shell_call_output"
)

// openAIResponsesNative returns the native type a tool is declared as in a
// Responses request: its Native is "openai/TYPE", TYPE is one this package
// reads the calls of, and the tool is named TYPE (the calls come back
// without a name: they are read as calls of the tool named TYPE).
func openAIResponsesNative(t llmtoolkit.Tool) (string, bool) {
	typ, ok := strings.CutPrefix(t.Native, "openai/")
	if !ok || t.Name != typ {
		return "", false
	}
	switch typ {
	case OpenAIResponsesApplyPatchType, OpenAIResponsesShellType:
		return typ, true
	}
	return "", false
}

// isOpenAIResponsesNativeType reports whether a tool entry of this type is
// written as its type alone.
func isOpenAIResponsesNativeType(typ string) bool {
	return typ == OpenAIResponsesToolSearchType || typ == OpenAIResponsesApplyPatchType || typ == OpenAIResponsesShellType
}

// OpenAIResponsesShellOutput is one command's entry in a shell_call_output
// item: what it wrote and how it ended.
type OpenAIResponsesShellOutput struct {
	// Stdout is what the command wrote to its standard output.
	Stdout string `json:"stdout"`
	// Stderr is what the command wrote to its standard error.
	Stderr string `json:"stderr"`
	// Outcome is how it ended.
	Outcome OpenAIResponsesShellOutcome `json:"outcome"`
}

// OpenAIResponsesShellOutcome is how a command of a shell call ended: it
// exited with ExitCode ({"type": "exit", "exit_code": N}), or it was killed
// at its timeout ({"type": "timeout"}).
type OpenAIResponsesShellOutcome struct {
	// TimedOut reports that the command was killed at its timeout.
	TimedOut bool
	// ExitCode is the command's exit code, when it did not time out.
	ExitCode int
}

// MarshalJSON writes the outcome in the API's shape.
func (o OpenAIResponsesShellOutcome) MarshalJSON() ([]byte, error) {
	if o.TimedOut {
		return []byte(`{"type":"timeout"}`), nil
	}
	return json.Marshal(struct {
		Type     string `json:"type"`
		ExitCode int    `json:"exit_code"`
	}{"exit", o.ExitCode})
}

// UnmarshalJSON reads the outcome from the API's shape.
func (o *OpenAIResponsesShellOutcome) UnmarshalJSON(data []byte) error {
	var v struct {
		Type     string `json:"type"`
		ExitCode *int   `json:"exit_code"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch {
	case v.Type == "timeout":
		*o = OpenAIResponsesShellOutcome{TimedOut: true}
	case v.Type == "exit" && v.ExitCode != nil:
		*o = OpenAIResponsesShellOutcome{ExitCode: *v.ExitCode}
	default:
		return fmt.Errorf("a shell outcome is {\"type\":\"exit\",\"exit_code\":N} or {\"type\":\"timeout\"}, got %s", data)
	}
	return nil
}

// openAIResponsesNativeCall reads an apply_patch_call or shell_call item
// into the call of its tool. An item that cannot be run as it is (an
// operation of an unknown type, a diff that would reach past its one file)
// gives a [llmtoolkit.MalformedCall] naming what is wrong.
func openAIResponsesNativeCall(it openAIResponsesItemIn) llmtoolkit.Call {
	switch it.Type {
	case itemApplyPatchCall:
		p, err := v4aOfOperation(it.Operation)
		if err != nil {
			return llmtoolkit.MalformedCall(it.CallID, OpenAIResponsesApplyPatchType, string(it.Operation), err)
		}
		return llmtoolkit.Call{ID: it.CallID, Name: OpenAIResponsesApplyPatchType, Arguments: map[string]any{"patch": p}}
	default: // itemShellCall
		var action struct {
			Commands        []string `json:"commands"`
			TimeoutMS       *int64   `json:"timeout_ms"`
			MaxOutputLength *int64   `json:"max_output_length"`
		}
		if err := json.Unmarshal(it.Action, &action); err != nil {
			return llmtoolkit.MalformedCall(it.CallID, OpenAIResponsesShellType, string(it.Action), fmt.Errorf("the shell_call's action is not {\"commands\": [...], ...}: %w", err))
		}
		commands := make([]any, len(action.Commands))
		for i, c := range action.Commands {
			commands[i] = c
		}
		args := map[string]any{"commands": commands}
		if action.TimeoutMS != nil {
			args["timeout_ms"] = float64(*action.TimeoutMS)
		}
		if action.MaxOutputLength != nil {
			args["max_output_length"] = float64(*action.MaxOutputLength)
		}
		return llmtoolkit.Call{ID: it.CallID, Name: OpenAIResponsesShellType, Arguments: args}
	}
}

// errNativeOperation is wrapped by the errors of an apply_patch_call whose
// operation cannot be run.
var errNativeOperation = errors.New("the apply_patch_call's operation cannot be applied")

// v4aOfOperation writes an apply_patch_call's operation as the V4A patch
// that does the same to the same one file. The operation's diff is the body
// of one file's section: its lines may not start a header or end the patch
// (a line starting with "***" other than "*** End of File"), and the path
// may not span lines, so that the patch touches that file alone.
func v4aOfOperation(raw json.RawMessage) (string, error) {
	var op struct {
		Type string `json:"type"`
		Path string `json:"path"`
		Diff string `json:"diff"`
	}
	if err := json.Unmarshal(raw, &op); err != nil {
		return "", fmt.Errorf("%w: it is not {\"type\", \"path\", \"diff\"}: %v", errNativeOperation, err)
	}
	if strings.TrimSpace(op.Path) == "" || strings.ContainsAny(op.Path, "\r\n") {
		return "", fmt.Errorf("%w: its path %q is empty or spans lines", errNativeOperation, op.Path)
	}
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	switch op.Type {
	case "create_file":
		b.WriteString("*** Add File: " + op.Path + "\n")
	case "update_file":
		b.WriteString("*** Update File: " + op.Path + "\n")
	case "delete_file":
		b.WriteString("*** Delete File: " + op.Path + "\n")
		b.WriteString("*** End Patch\n")
		return b.String(), nil
	default:
		return "", fmt.Errorf("%w: its type is %q; expected \"create_file\", \"update_file\" or \"delete_file\"", errNativeOperation, op.Type)
	}
	diff := strings.TrimSuffix(strings.ReplaceAll(op.Diff, "\r\n", "\n"), "\n")
	for i, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "***") && l != "*** End of File" {
			return "", fmt.Errorf("%w: line %d of the diff for %s, %q, is not a diff line", errNativeOperation, i+1, op.Path, l)
		}
	}
	if diff != "" {
		b.WriteString(diff + "\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String(), nil
}

// OpenAIResponsesCallOutput converts the result of call to the item that
// answers it: an apply_patch_call_output ("completed", or "failed" for an
// error result, with the result's text as its output) for an
// apply_patch_call, a shell_call_output for a shell_call, and the
// function_call_output of [OpenAIResponsesToolOutput] for a function call.
// A shell_call_output's "output" is read from the result's text when it is
// the shell tool's JSON answer ({"output": [...]}, codetools' shell);
// any other text (a refusal, an error) is one entry whose stderr it is,
// with exit code 1 for an error result and 0 otherwise. The call's
// max_output_length is echoed. A native answer carries text alone: parts
// are named in it, not sent.
func OpenAIResponsesCallOutput(call llmtoolkit.Call, r llmtoolkit.Result) OpenAIResponsesItem {
	var st openAIResponsesCallState
	stateGet(call.Provider, StateOpenAIResponses, &st)
	text := errorPrefixed(r)
	if st.Kind != "" {
		for _, p := range r.Parts {
			text = joinText(text, partNote(p, "a Responses "+st.Kind+"_output", "text only"))
		}
	}
	switch st.Kind {
	case itemApplyPatchCall:
		status := "completed"
		if r.IsError {
			status = "failed"
		}
		return OpenAIResponsesItem{Type: itemApplyPatchCallOutput, CallID: r.ToolCallID, Status: status, Output: text}
	case itemShellCall:
		it := OpenAIResponsesItem{Type: itemShellCallOutput, CallID: r.ToolCallID, ShellOutput: shellOutputOf(r, text)}
		if n, ok := call.Arguments["max_output_length"].(float64); ok && n > 0 {
			it.MaxOutputLength = int64(n)
		}
		return it
	}
	return OpenAIResponsesToolOutput(r)
}

// shellOutputOf reads the per-command entries of a shell tool's answer.
func shellOutputOf(r llmtoolkit.Result, text string) []OpenAIResponsesShellOutput {
	if !r.IsError && len(r.Parts) == 0 {
		var answer struct {
			Output []OpenAIResponsesShellOutput `json:"output"`
		}
		if json.Unmarshal([]byte(r.Content), &answer) == nil && len(answer.Output) > 0 {
			return answer.Output
		}
	}
	code := 0
	if r.IsError {
		code = 1
	}
	return []OpenAIResponsesShellOutput{{Stderr: text, Outcome: OpenAIResponsesShellOutcome{ExitCode: code}}}
}

// openAIResponsesNativeItem is the item that replays a native call: the
// fields of its type the API takes back, as the response sent them.
func openAIResponsesNativeItem(c llmtoolkit.Call, st openAIResponsesCallState) OpenAIResponsesItem {
	item := struct {
		Type        string          `json:"type"`
		ID          string          `json:"id,omitempty"`
		CallID      string          `json:"call_id"`
		Status      string          `json:"status,omitempty"`
		Operation   json.RawMessage `json:"operation,omitempty"`
		Action      json.RawMessage `json:"action,omitempty"`
		Environment json.RawMessage `json:"environment,omitempty"`
	}{Type: st.Kind, ID: st.ID, CallID: c.ID, Status: st.Status, Operation: st.Operation, Action: st.Action, Environment: st.Environment}
	if item.Status == "" && st.Kind == itemApplyPatchCall {
		item.Status = "completed" // the API requires it
	}
	raw, _ := json.Marshal(item) // raw JSON and strings: always encodes
	return OpenAIResponsesItem{Type: st.Kind, Raw: raw}
}

// notNull returns raw, or nil for an absent or null value.
func notNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}
