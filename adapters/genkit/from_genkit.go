package genkitadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/firebase/genkit/go/ai"

	"github.com/llmtoolkit/llmtoolkit"
)

// ErrInterrupted is wrapped by the error of a call whose genkit tool asked
// to interrupt the generation (ai.ToolContext.Interrupt): a Resolver has no
// way to pause a run for a human and resume the call, so the call fails
// and the model reads the interrupt's metadata.
var ErrInterrupted = errors.New("genkit tool interrupted")

// FromTools returns genkit tools as a [llmtoolkit.Resolver], so that
// [llmtoolkit.Compose], sessions, trace, the agent layer and MCP serving
// apply to them. Each becomes a [llmtoolkit.Tool] of the same name and
// description, its schema the tool's input schema (an object schema with no
// properties when the tool has none). The error names the tool whose
// definition llmtoolkit refuses (a name outside ^[a-zA-Z0-9_-]{1,64}$, such
// as genkit's "provider/name", an empty description, a schema that does not
// compile) or a name given twice.
//
// A call runs the tool with RunRawMultipart on the call's arguments. The
// output becomes the content: a string as it is, any other value as JSON;
// the text of the response's content parts follows it, one per line, and
// its media parts are dropped (counted in a closing note). A tool error is
// returned (without genkit's "error calling tool NAME: " prefix), so
// [llmtoolkit.Execute] makes it an error result; an interrupt becomes an
// error wrapping [ErrInterrupted].
func FromTools(tools ...ai.Tool) (llmtoolkit.Resolver, error) {
	r := &genkitResolver{byName: make(map[string]int, len(tools))}
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("genkitadapter: tool %d is nil", i)
		}
		def := t.Definition()
		if def == nil {
			return nil, fmt.Errorf("genkitadapter: tool %q has no definition", t.Name())
		}
		lt, err := llmtoolkit.NewTool(def.Name, def.Description, def.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("genkitadapter: genkit tool %q: %w", def.Name, err)
		}
		if _, dup := r.byName[lt.Name]; dup {
			return nil, fmt.Errorf("genkitadapter: two genkit tools are named %q; rename one", lt.Name)
		}
		r.byName[lt.Name] = len(r.defs)
		r.defs = append(r.defs, lt)
		r.tools = append(r.tools, t)
	}
	return r, nil
}

// genkitResolver resolves calls with genkit tools.
type genkitResolver struct {
	defs   []llmtoolkit.Tool
	tools  []ai.Tool
	byName map[string]int
}

// Tools lists the tools' definitions.
func (r *genkitResolver) Tools() []llmtoolkit.Tool { return r.defs }

// LookupTool finds one definition by name.
func (r *genkitResolver) LookupTool(name string) (llmtoolkit.Tool, bool) {
	i, ok := r.byName[name]
	if !ok {
		return llmtoolkit.Tool{}, false
	}
	return r.defs[i], true
}

// Resolve runs the call's genkit tool.
func (r *genkitResolver) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	i, ok := r.byName[call.Name]
	if !ok {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	args := call.Arguments
	if args == nil {
		args = map[string]any{}
	}
	resp, err := r.tools[i].RunRawMultipart(ctx, args)
	if err != nil {
		if interrupted, meta := ai.IsToolInterruptError(err); interrupted {
			if len(meta) == 0 {
				return "", ErrInterrupted
			}
			b, _ := json.Marshal(meta)
			return "", fmt.Errorf("%w: %s", ErrInterrupted, b)
		}
		return "", ownError(call.Name, err)
	}
	text, parts, err := content(resp)
	llmtoolkit.Attach(ctx, parts...)
	return text, err
}

// ownError returns the tool's own error when err is genkit's wrapping of it
// ("error calling tool NAME: ..."), which only repeats the tool's name to
// the model; else err.
func ownError(name string, err error) error {
	inner := errors.Unwrap(err)
	if inner != nil && err.Error() == "error calling tool "+name+": "+inner.Error() {
		return inner
	}
	return err
}

// content turns a genkit tool response into the text the model reads
// and the parts of its media (data URLs decoded; others kept as URLs).
func content(resp *ai.MultipartToolResponse) (string, []llmtoolkit.Part, error) {
	if resp == nil {
		return "", nil, nil
	}
	var b strings.Builder
	switch out := resp.Output.(type) {
	case nil:
	case string:
		b.WriteString(out)
	default:
		j, err := json.Marshal(out)
		if err != nil {
			return "", nil, fmt.Errorf("genkitadapter: encode the tool's output: %w", err)
		}
		b.Write(j)
	}
	var parts []llmtoolkit.Part
	dropped := 0
	for _, p := range resp.Content {
		switch {
		case p == nil:
		case p.IsText():
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		case p.IsMedia():
			if mp, ok := mediaPart(p); ok {
				parts = append(parts, mp)
				continue
			}
			dropped++
		default:
			dropped++
		}
	}
	if dropped > 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%d part(s) of the tool's response dropped: neither text nor media with a base64 data URL or a URL]", dropped)
	}
	return b.String(), parts, nil
}
