package eino

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/llmtoolkit/llmtoolkit"
)

// Option configures [Tools].
type Option func(*config)

type config struct {
	display     func(ctx context.Context, callID string, d llmtoolkit.Display)
	callContext func(ctx context.Context, callID string) context.Context
	haltResult  bool
}

// WithDisplay hands every Display a call attaches to fn, with eino's tool
// call id, before the result goes back to eino. fn runs on the tool's
// goroutine (eino's ToolsNode runs calls in parallel unless told otherwise),
// so it must be safe for concurrent use.
func WithDisplay(fn func(ctx context.Context, callID string, d llmtoolkit.Display)) Option {
	return func(c *config) { c.display = fn }
}

// WithCallContext derives each call's context from eino's tool call id
// before the call runs: the place to bind a session or iteration that eino
// does not carry (llmtoolkit.Scope.Session, llmtoolkit.Scope.Iteration).
func WithCallContext(fn func(ctx context.Context, callID string) context.Context) Option {
	return func(c *config) { c.callContext = fn }
}

// WithHaltAsResult makes a llmtoolkit.Halt an ordinary error result, read by
// the model, instead of a Go error that ends eino's run.
func WithHaltAsResult() Option {
	return func(c *config) { c.haltResult = true }
}

// displayOptions is the implementation-specific option [WithDisplayTo] sets.
type displayOptions struct {
	display func(callID string, d llmtoolkit.Display)
}

// WithDisplayTo is an eino tool option, for one run, that hands each Display of
// the adapted tools to fn with eino's tool call id. Pass it with
// react.WithToolOptions or compose.WithToolOption. fn must be safe for
// concurrent use.
func WithDisplayTo(fn func(callID string, d llmtoolkit.Display)) tool.Option {
	return tool.WrapImplSpecificOptFn(func(o *displayOptions) { o.display = fn })
}

// Tools returns one eino tool for each tool r lists, in r's order. It fails
// (wrapping [ErrSchemaChanged]) if a tool's schema cannot be held by eino's
// jsonschema.Schema unchanged.
func Tools(ctx context.Context, r llmtoolkit.Resolver, opts ...Option) ([]tool.BaseTool, error) {
	if r == nil {
		return nil, errors.New("eino.Tools: the resolver is nil; pass one, such as codetools.New(dir)")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := &config{}
	for _, o := range opts {
		if o != nil {
			o(cfg)
		}
	}
	defs := r.Tools()
	out := make([]tool.BaseTool, 0, len(defs))
	for _, t := range defs {
		info, err := ToolInfo(t)
		if err != nil {
			return nil, err
		}
		out = append(out, &invokable{info: info, name: t.Name, r: r, cfg: cfg})
	}
	return out, nil
}

// ToolInfo converts a llmtoolkit tool's definition to eino's: same name,
// description and JSON Schema.
func ToolInfo(t llmtoolkit.Tool) (*schema.ToolInfo, error) {
	raw, err := json.Marshal(t.Parameters)
	if err != nil {
		return nil, fmt.Errorf("eino: tool %q: encoding its parameters: %w", t.Name, err)
	}
	s := &jsonschema.Schema{}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("eino: tool %q: its parameters are not a JSON Schema eino can hold: %w", t.Name, err)
	}
	if err := sameJSON(raw, s); err != nil {
		return nil, fmt.Errorf("eino: tool %q: %w", t.Name, err)
	}
	return &schema.ToolInfo{
		Name:        t.Name,
		Desc:        t.Description,
		ParamsOneOf: schema.NewParamsOneOfByJSONSchema(s),
	}, nil
}

// ErrSchemaChanged is wrapped by the error of [ToolInfo] (and so [Tools])
// when eino's jsonschema.Schema cannot hold a tool's schema as it is: a
// keyword it does not model would be dropped, and the model would be told a
// schema other than the one Execute validates against.
var ErrSchemaChanged = errors.New("the JSON Schema would change in eino")

// sameJSON checks that s encodes to the same JSON as raw, compared after
// both are decoded, so key order and spacing do not count.
func sameJSON(raw []byte, s *jsonschema.Schema) error {
	back, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("%w: encoding eino's copy: %w", ErrSchemaChanged, err)
	}
	var a, b any
	if err := json.Unmarshal(raw, &a); err != nil {
		return err
	}
	if err := json.Unmarshal(back, &b); err != nil {
		return err
	}
	ca, _ := json.Marshal(a)
	cb, _ := json.Marshal(b)
	if string(ca) != string(cb) {
		return fmt.Errorf("%w: %s became %s; remove the keywords eino's jsonschema.Schema does not model", ErrSchemaChanged, ca, cb)
	}
	return nil
}

// invokable is one llmtoolkit tool as an eino InvokableTool.
type invokable struct {
	info *schema.ToolInfo
	name string
	r    llmtoolkit.Resolver
	cfg  *config
}

// Info returns the tool's eino definition.
func (t *invokable) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

// InvokableRun runs one call through llmtoolkit.Execute. It returns a Go
// error only for a Halt (unless WithHaltAsResult): every other failure is the
// returned text, so eino's run goes on.
func (t *invokable) InvokableRun(ctx context.Context, argumentsInJSON string, opts ...tool.Option) (string, error) {
	id := compose.GetToolCallID(ctx)
	if t.cfg.callContext != nil {
		ctx = t.cfg.callContext(ctx, id)
	}
	call := llmtoolkit.ParseCallLenient(id, t.name, argumentsInJSON)
	res := llmtoolkit.Execute(ctx, t.r, call)
	if res.Display != nil {
		if t.cfg.display != nil {
			t.cfg.display(ctx, id, *res.Display)
		}
		if o := tool.GetImplSpecificOptions(&displayOptions{}, opts...); o.display != nil {
			o.display(id, *res.Display)
		}
	}
	if res.IsError && !t.cfg.haltResult && errors.Is(res.Err, llmtoolkit.ErrHalt) {
		return "", fmt.Errorf("eino: tool %q halted the run: %w", t.name, res.Err)
	}
	if len(res.Parts) > 0 {
		return res.Content + "\n" + droppedPartsNote(res.Parts), nil
	}
	return res.Content, nil
}

// UnknownTools returns a handler for compose.ToolsNodeConfig's
// UnknownToolsHandler that answers a call of a name the node does not hold
// through llmtoolkit.Execute on r: the model reads llmtoolkit's "unknown
// tool" error result (or the tool's answer, if r has come to offer it since
// the node was built) instead of eino's run ending with an error.
func UnknownTools(r llmtoolkit.Resolver, opts ...Option) func(ctx context.Context, name, input string) (string, error) {
	cfg := &config{}
	for _, o := range opts {
		if o != nil {
			o(cfg)
		}
	}
	return func(ctx context.Context, name, input string) (string, error) {
		return (&invokable{name: name, r: r, cfg: cfg}).InvokableRun(ctx, input)
	}
}
