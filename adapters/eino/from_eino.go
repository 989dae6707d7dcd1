package eino

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/llmtoolkit/llmtoolkit"
)

// ErrInterrupted is wrapped by the error of an eino tool that asked to
// interrupt the run (tool.Interrupt, compose.Interrupt): llmtoolkit has no
// resume, so the call fails.
var ErrInterrupted = errors.New("eino tool asked to interrupt")

// EinoResolver is a llmtoolkit.Resolver over eino tools, built by [Resolver].
type EinoResolver struct {
	tools  []llmtoolkit.Tool
	byName map[string]int
	impls  []tool.BaseTool
}

// Resolver reads each eino tool's Info and returns a resolver that offers
// them, in the order given. It fails on a nil tool, a tool whose Info fails,
// a name given twice, a schema llmtoolkit refuses, or a tool that is neither
// invokable nor streamable (plain or enhanced).
func Resolver(ctx context.Context, tools ...tool.BaseTool) (*EinoResolver, error) {
	r := &EinoResolver{byName: make(map[string]int, len(tools))}
	for i, bt := range tools {
		if bt == nil {
			return nil, fmt.Errorf("eino.Resolver: tool %d is nil", i)
		}
		switch bt.(type) {
		case tool.InvokableTool, tool.StreamableTool, tool.EnhancedInvokableTool, tool.EnhancedStreamableTool:
		default:
			return nil, fmt.Errorf("eino.Resolver: tool %d (%T) can be neither invoked nor streamed", i, bt)
		}
		info, err := bt.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("eino.Resolver: tool %d: Info: %w", i, err)
		}
		t, err := FromToolInfo(info)
		if err != nil {
			return nil, fmt.Errorf("eino.Resolver: tool %d: %w", i, err)
		}
		if _, dup := r.byName[t.Name]; dup {
			return nil, fmt.Errorf("eino.Resolver: tool %q is given twice; give each name once", t.Name)
		}
		r.byName[t.Name] = len(r.tools)
		r.tools = append(r.tools, t)
		r.impls = append(r.impls, bt)
	}
	return r, nil
}

// FromToolInfo converts eino's tool definition to llmtoolkit's: same name,
// description and parameters (a ParamsOneOf of ParameterInfo becomes the
// JSON Schema eino itself would send; none becomes an empty object schema).
func FromToolInfo(info *schema.ToolInfo) (llmtoolkit.Tool, error) {
	if info == nil {
		return llmtoolkit.Tool{}, errors.New("eino: the tool info is nil")
	}
	params := map[string]any{"type": "object", "properties": map[string]any{}}
	if info.ParamsOneOf != nil {
		js, err := info.ParamsOneOf.ToJSONSchema()
		if err != nil {
			return llmtoolkit.Tool{}, fmt.Errorf("eino: tool %q: its parameters: %w", info.Name, err)
		}
		if js != nil {
			raw, err := json.Marshal(js)
			if err != nil {
				return llmtoolkit.Tool{}, fmt.Errorf("eino: tool %q: encoding its schema: %w", info.Name, err)
			}
			params = nil
			if err := json.Unmarshal(raw, &params); err != nil {
				return llmtoolkit.Tool{}, fmt.Errorf("eino: tool %q: its schema is not a JSON object: %w", info.Name, err)
			}
			if _, ok := params["type"]; !ok {
				params["type"] = "object"
			}
		}
	}
	t, err := llmtoolkit.NewTool(info.Name, info.Desc, params)
	if err != nil {
		return llmtoolkit.Tool{}, fmt.Errorf("eino: tool %q: %w", info.Name, err)
	}
	return t, nil
}

// Tools lists the eino tools' definitions.
func (r *EinoResolver) Tools() []llmtoolkit.Tool { return append([]llmtoolkit.Tool(nil), r.tools...) }

// LookupTool finds one tool by name.
func (r *EinoResolver) LookupTool(name string) (llmtoolkit.Tool, bool) {
	i, ok := r.byName[name]
	if !ok {
		return llmtoolkit.Tool{}, false
	}
	return r.tools[i], true
}

// Resolve runs the named eino tool with the call's arguments as JSON.
func (r *EinoResolver) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	i, ok := r.byName[call.Name]
	if !ok {
		return "", fmt.Errorf("%w: %q", llmtoolkit.ErrUnknownTool, call.Name)
	}
	args := call.Arguments
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("%w: encoding them for eino: %w", llmtoolkit.ErrInvalidArguments, err)
	}
	out, err := run(ctx, r.impls[i], string(raw))
	if err != nil {
		if info, ok := compose.IsInterruptRerunError(err); ok {
			return "", fmt.Errorf("%w (%v): llmtoolkit cannot resume it", ErrInterrupted, info)
		}
		return "", err
	}
	return out, nil
}

// run calls whichever interface the tool has, preferring the plain
// invokable one.
func run(ctx context.Context, bt tool.BaseTool, args string) (string, error) {
	switch t := bt.(type) {
	case tool.InvokableTool:
		return t.InvokableRun(ctx, args)
	case tool.StreamableTool:
		sr, err := t.StreamableRun(ctx, args)
		if err != nil {
			return "", err
		}
		defer sr.Close()
		var b strings.Builder
		for {
			chunk, err := sr.Recv()
			if errors.Is(err, io.EOF) {
				return b.String(), nil
			}
			if err != nil {
				return "", err
			}
			b.WriteString(chunk)
		}
	case tool.EnhancedInvokableTool:
		res, err := t.InvokableRun(ctx, &schema.ToolArgument{Text: args})
		if err != nil {
			return "", err
		}
		var parts []schema.ToolOutputPart
		if res != nil {
			parts = res.Parts
		}
		return joinParts(ctx, parts), nil
	case tool.EnhancedStreamableTool:
		sr, err := t.StreamableRun(ctx, &schema.ToolArgument{Text: args})
		if err != nil {
			return "", err
		}
		defer sr.Close()
		var parts []schema.ToolOutputPart
		for {
			chunk, err := sr.Recv()
			if errors.Is(err, io.EOF) {
				return joinParts(ctx, parts), nil
			}
			if err != nil {
				return "", err
			}
			if chunk != nil {
				parts = append(parts, chunk.Parts...)
			}
		}
	}
	return "", fmt.Errorf("eino tool %T can be neither invoked nor streamed", bt)
}

// joinParts keeps the text parts as the text and attaches the others as
// parts ([einoPart]); it says how many could not be read.
func joinParts(ctx context.Context, parts []schema.ToolOutputPart) string {
	var b strings.Builder
	dropped := 0
	var media []llmtoolkit.Part
	for _, p := range parts {
		if p.Type == schema.ToolPartTypeText {
			b.WriteString(p.Text)
			continue
		}
		if mp, ok := einoPart(p); ok {
			media = append(media, mp)
			continue
		}
		dropped++
	}
	llmtoolkit.Attach(ctx, media...)
	if dropped > 0 {
		fmt.Fprintf(&b, "\n[%d non-text part(s) of the result were dropped: neither base64 data that decodes nor a URL]", dropped)
	}
	return b.String()
}
