package genkitadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/core/api"

	"github.com/llmtoolkit/llmtoolkit"
)

// Option configures [Tools] and [ToolRefs].
type Option func(*config)

type config struct {
	onResult func(context.Context, llmtoolkit.Result)
}

// WithOnResult makes every call through the adapted tools tell fn its full
// [llmtoolkit.Result] once it has run: the host's slot for the
// [llmtoolkit.Display] (genkit's tool response has none, so the model's
// conversation never carries it), the error behind an error result
// ([llmtoolkit.Result.Err]) and the content. fn runs on the tool's
// goroutine; genkit runs the calls of one model turn concurrently, so fn
// must be safe for concurrent use. A panic in fn is rescued and the call's
// output is kept.
func WithOnResult(fn func(ctx context.Context, res llmtoolkit.Result)) Option {
	return func(c *config) { c.onResult = fn }
}

// Tools returns r's tools, as r lists them now, as genkit tools: same name,
// description and input schema (a deep copy of [llmtoolkit.Tool.Parameters],
// which encodes byte for byte as llmtoolkit's, so that a plugin that edits
// the schema it sends never edits llmtoolkit's). A nil r has no tools. Pass them to a generation
// with ai.WithTools (see [ToolRefs]), or register them once with
// genkit.RegisterAction(g, tool) and name them with ai.ToolName.
//
// Every call runs through [llmtoolkit.Execute] on r, with the arguments
// exactly as the model sent them: genkit's own input validation and
// normalisation (which drops null fields) are not applied, llmtoolkit's
// are. The tool's output is the result's content, a JSON string; an error
// result (invalid arguments, a failed or panicking tool, a refused call, a
// cancelled context) becomes the output {"error": CONTENT}, so the model
// reads it and the generation goes on: the call never returns a Go error
// to genkit, which would end Generate.
//
// The session and iteration travel in the context: genkit hands the
// tool (its ai.ToolContext) the context given to Generate, so a session
// bound there with [llmtoolkit.Scope].Session reaches the tools, and
// [CountTurns] numbers the model's turns. Calls are resolved by name on r
// at run time, so r's resolution changes are seen at once, but genkit reads
// the list of tools (and their schemas) once per Generate: a tool list that
// changes (the plan mode's switch) takes effect at the next Generate, built
// with a new call of Tools.
func Tools(r llmtoolkit.Resolver, opts ...Option) []ai.Tool {
	if r == nil {
		return nil
	}
	var cfg config
	for _, opt := range opts {
		opt(&cfg)
	}
	defs := r.Tools()
	tools := make([]ai.Tool, 0, len(defs))
	for _, def := range defs {
		tools = append(tools, newTool(r, def, cfg))
	}
	return tools
}

// ToolRefs is [Tools] as the ai.ToolRef values ai.WithTools takes:
//
//	ai.WithTools(genkitadapter.ToolRefs(codeTools)...)
func ToolRefs(r llmtoolkit.Resolver, opts ...Option) []ai.ToolRef {
	tools := Tools(r, opts...)
	refs := make([]ai.ToolRef, len(tools))
	for i, t := range tools {
		refs[i] = t
	}
	return refs
}

// rawInputKey carries the call's input JSON, as genkit received it from the
// model, past genkit's normalisation into the adapter's own function.
type rawInputKey struct{}

// toolAction is the genkit action of one llmtoolkit tool. It describes the
// tool with llmtoolkit's schema and runs through a genkit action that has
// no input schema (so genkit neither validates nor rewrites the input,
// and still traces the call), handing the raw input to [llmtoolkit.Execute].
type toolAction struct {
	desc  api.ActionDesc
	inner *core.ActionDef[any, any, struct{}]
}

func newToolAction(r llmtoolkit.Resolver, def llmtoolkit.Tool, cfg config) *toolAction {
	meta := map[string]any{
		"type":        api.ActionTypeToolV2,
		"name":        def.Name,
		"description": def.Description,
		"tool":        map[string]any{"multipart": false},
	}
	name := def.Name
	inner := core.NewAction(name, api.ActionTypeToolV2, meta, nil, func(ctx context.Context, _ any) (any, error) {
		raw, _ := ctx.Value(rawInputKey{}).(json.RawMessage)
		res := execute(ctx, r, name, raw, cfg)
		return &ai.MultipartToolResponse{Output: output(res)}, nil
	})
	desc := inner.Desc()
	desc.InputSchema, _ = deepCopy(def.Parameters).(map[string]any)
	desc.Metadata = maps.Clone(meta)
	return &toolAction{desc: desc, inner: inner}
}

// deepCopy copies the maps and slices of a decoded JSON value; the other
// values (strings, numbers of any Go type, booleans) are kept as they are.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		c := make(map[string]any, len(v))
		for k, e := range v {
			c[k] = deepCopy(e)
		}
		return c
	case []any:
		if v == nil {
			return v
		}
		c := make([]any, len(v))
		for i, e := range v {
			c[i] = deepCopy(e)
		}
		return c
	case []string:
		return slices.Clone(v)
	default:
		return v
	}
}

// Name returns the tool's name.
func (a *toolAction) Name() string { return a.desc.Name }

// Desc describes the tool with llmtoolkit's definition.
func (a *toolAction) Desc() api.ActionDesc { return a.desc }

// RunJSON runs the call; its error is nil whatever the call's outcome
// (genkit's own failures aside, such as a cancelled trace export).
func (a *toolAction) RunJSON(ctx context.Context, input json.RawMessage, cb func(context.Context, json.RawMessage) error) (json.RawMessage, error) {
	return a.inner.RunJSON(context.WithValue(ctx, rawInputKey{}, input), input, cb)
}

// RunJSONWithTelemetry is RunJSON with genkit's trace and span ids.
func (a *toolAction) RunJSONWithTelemetry(ctx context.Context, input json.RawMessage, cb func(context.Context, json.RawMessage) error) (*api.ActionRunResult[json.RawMessage], error) {
	return a.inner.RunJSONWithTelemetry(context.WithValue(ctx, rawInputKey{}, input), input, cb)
}

// Register records the action under genkit's tool keys (tool.v2, and the
// legacy tool key genkit falls back to).
func (a *toolAction) Register(r api.Registry) {
	provider, id := api.ParseName(a.desc.Name)
	r.RegisterAction(api.NewKey(api.ActionTypeToolV2, provider, id), a)
	r.RegisterAction(api.NewKey(api.ActionTypeTool, provider, id), a)
}

// execute runs one call on r from the input JSON genkit received.
func execute(ctx context.Context, r llmtoolkit.Resolver, name string, raw json.RawMessage, cfg config) llmtoolkit.Result {
	call := llmtoolkit.ParseCallLenient("", name, string(raw))
	if len(raw) == 0 || string(raw) == "null" {
		call = llmtoolkit.Call{Name: name, Arguments: map[string]any{}}
	}
	ctx = withTurn(ctx)
	res := llmtoolkit.Execute(ctx, r, call)
	if cfg.onResult != nil {
		tellResult(ctx, cfg.onResult, res)
	}
	return res
}

// tellResult calls fn, rescuing its panic: the host's hook must not turn a
// finished call into a failed Generate.
func tellResult(ctx context.Context, fn func(context.Context, llmtoolkit.Result), res llmtoolkit.Result) {
	defer func() {
		if v := recover(); v != nil {
			slog.ErrorContext(ctx, "genkitadapter: WithOnResult panicked", "tool", res.Name, "panic", fmt.Sprint(v))
		}
	}()
	fn(ctx, res)
}

// output is what the model reads: the content, or {"error": content}.
func output(res llmtoolkit.Result) any {
	content := res.Content
	if len(res.Parts) > 0 {
		content += "\n" + droppedPartsNote(res.Parts)
	}
	if res.IsError {
		return map[string]any{"error": content}
	}
	return content
}

// tool is one llmtoolkit tool as a genkit ai.Tool.
type tool struct {
	action *toolAction
}

func newTool(r llmtoolkit.Resolver, def llmtoolkit.Tool, cfg config) *tool {
	return &tool{action: newToolAction(r, def, cfg)}
}

// Name returns the tool's name.
func (t *tool) Name() string { return t.action.desc.Name }

// Definition returns the definition genkit sends to models.
func (t *tool) Definition() *ai.ToolDefinition {
	return &ai.ToolDefinition{
		Name:        t.action.desc.Name,
		Description: t.action.desc.Description,
		InputSchema: t.action.desc.InputSchema,
		Metadata:    map[string]any{"multipart": false},
	}
}

// RunRaw runs the tool on input (a JSON-encodable value, usually a map) and
// returns its output: the content string, or {"error": CONTENT}.
func (t *tool) RunRaw(ctx context.Context, input any) (any, error) {
	resp, err := t.RunRawMultipart(ctx, input)
	if err != nil {
		return nil, err
	}
	return resp.Output, nil
}

// RunRawMultipart is RunRaw with genkit's multipart response (whose
// Content is always empty).
func (t *tool) RunRawMultipart(ctx context.Context, input any) (*ai.MultipartToolResponse, error) {
	in, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("genkitadapter: tool %q: encode the input: %w", t.Name(), err)
	}
	out, err := t.action.RunJSON(ctx, in, nil)
	if err != nil {
		return nil, fmt.Errorf("genkitadapter: tool %q: %w", t.Name(), err)
	}
	var resp ai.MultipartToolResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("genkitadapter: tool %q: decode the output: %w", t.Name(), err)
	}
	return &resp, nil
}

// Respond answers an interrupted request of this tool with output. The
// adapted tools never interrupt; Respond is there for the ai.Tool
// interface and returns nil for a part that is not a tool request.
func (t *tool) Respond(toolReq *ai.Part, output any, opts *ai.RespondOptions) *ai.Part {
	if toolReq == nil || !toolReq.IsToolRequest() {
		return nil
	}
	p := ai.NewResponseForToolRequest(toolReq, output)
	p.Metadata = map[string]any{"interruptResponse": true}
	if opts != nil && opts.Metadata != nil {
		p.Metadata["interruptResponse"] = opts.Metadata
	}
	return p
}

// Restart returns the request again, its input replaced when opts says so,
// marked as resumed. The adapted tools never interrupt; Restart is there
// for the ai.Tool interface and returns nil for a part that is not a tool
// request.
func (t *tool) Restart(toolReq *ai.Part, opts *ai.RestartOptions) *ai.Part {
	if toolReq == nil || !toolReq.IsToolRequest() {
		return nil
	}
	req := *toolReq.ToolRequest
	meta := maps.Clone(toolReq.Metadata)
	if meta == nil {
		meta = map[string]any{}
	}
	delete(meta, "interrupt")
	meta["resumed"] = true
	if opts != nil {
		if opts.ReplaceInput != nil {
			meta["replacedInput"] = req.Input
			req.Input = opts.ReplaceInput
		}
		if opts.ResumedMetadata != nil {
			meta["resumed"] = opts.ResumedMetadata
		}
	}
	p := ai.NewToolRequestPart(&req)
	p.Metadata = meta
	return p
}

// Register registers the tool's action with r.
func (t *tool) Register(r api.Registry) { t.action.Register(r) }
