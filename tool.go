package llmtoolkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit/internal/schema"
)

// ErrInvalidTool is wrapped by every error that reports a malformed tool
// definition (bad name, empty description, schema that does not compile).
var ErrInvalidTool = errors.New("invalid tool")

// ErrInvalidArguments is wrapped by every error that reports arguments that
// do not satisfy a tool's parameter schema.
var ErrInvalidArguments = errors.New("invalid arguments")

// namePattern is what OpenAI, Anthropic and Gemini all accept as a tool name.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Tool describes a tool to a model: its name, what it does, and the JSON
// Schema of its arguments.
//
// Build tools with [NewTool] or [ToolFromMap]: they validate the definition
// and share one compiled schema between all copies of the Tool, so
// [Tool.ValidateArguments] never recompiles. A Tool built as a struct literal
// works too; its schema is compiled on first use and cached in that copy only
// if it was built by one of the constructors. Do not mutate Parameters after
// construction; replacing the map is detected and triggers a recompile.
type Tool struct {
	// Name is the tool's name, matching ^[a-zA-Z0-9_-]{1,64}$.
	Name string `json:"name"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description"`
	// Parameters is a JSON Schema of "type": "object" for the arguments.
	Parameters map[string]any `json:"parameters"`
	// Annotations are behaviour hints (MCP's tool annotations).
	Annotations *Annotations `json:"annotations,omitempty"`
	// Metadata is free-form data for hosts; it is never sent to models.
	Metadata map[string]any `json:"metadata,omitempty"`

	// The fields below are per-tool facts for the host's side. They travel
	// with the definition through every wrapper that passes definitions on
	// (Compose, Filter, sessions, trace.Recorder, a user's own), and are
	// never sent to a model or an MCP client (they have no JSON form).

	// SensitiveFields names arguments whose values must never be stored or
	// logged (passwords, tokens). A plain name ("token") matches that key at
	// any depth; a dotted name ("auth.token") matches that exact path, arrays
	// being passed through (so "users.password" reaches every element's
	// password). Both are compared without regard to case. trace.Recorder
	// redacts them and scrubs their values from results and errors.
	SensitiveFields []string `json:"-"`
	// Recipe, when set, makes the tool a plan of other calls: [Execute]
	// validates the call's arguments, then runs the [Plan] the recipe returns
	// instead of resolving the call. A recipe's steps run without recipes of
	// their own.
	Recipe Recipe `json:"-"`
	// Observers are told of each call of this tool that [Execute] answers
	// without resolving it: calls refused before they run (invalid
	// arguments, a cancelled context) and recipe calls (whose steps are
	// resolved, and seen by resolvers, one by one). trace.Recorder adds one
	// to every tool it lists, so that every call reaching it leaves a row.
	Observers []Observer `json:"-"`
	// Gates check each call of this tool that [Execute] runs as a recipe,
	// before its plan runs; the other calls reach the resolvers' Resolve,
	// where a wrapper checks them itself. A wrapper that must decide every
	// call, such as a permission guard, adds one to the recipe definitions
	// it lists, so the gate is asked whatever wraps it. Gates run in order;
	// the first error refuses the call (its observers are told), and
	// arguments a gate changed are validated again before the plan runs.
	Gates []Gate `json:"-"`
	// Paths, when set, declares which arguments name files and how the tool
	// turns their values into the files it opens. A permission layer
	// (package agent) matches its path rules on the canonical path, never on
	// the spelling the model chose, and refuses what the tool would refuse.
	Paths *PathArguments `json:"-"`
	// Commands, when set, declares which arguments are shell commands the
	// tool runs and what text it types into a running program. A
	// permission layer (package agent) checks them as it checks bash's
	// command, whatever the tool is named.
	Commands *CommandArguments `json:"-"`
	// Deferred marks a tool whose definition is not offered to the model
	// until the model finds it with a tool search: the client-side one of
	// package toolsearch, or a provider's own (package provider writes it
	// as "defer_loading" where the provider has a tool search). Mark every
	// tool of a resolver with [Defer].
	Deferred bool `json:"-"`
	// Native names a provider-defined tool whose input this tool takes as
	// the provider documents it, as "provider/type": for example
	// "anthropic/text_editor_20250728" (codetools' str_replace_based_edit_tool).
	// Package provider writes such a tool in that provider's request as its
	// built-in declaration (the model knows its commands), and as an
	// ordinary function tool for every other provider; its calls run through
	// Execute like any other, under the same name.
	Native string `json:"-"`

	schema *schemaCache
}

// Annotations are hints about a tool's behaviour, as in the Model Context
// Protocol. They are hints for hosts (for example to ask before running a
// destructive tool), not guarantees.
type Annotations struct {
	// ReadOnly: the tool does not modify its environment.
	ReadOnly bool `json:"readOnlyHint"`
	// Destructive: the tool may overwrite or delete data.
	Destructive bool `json:"destructiveHint"`
	// Idempotent: calling it twice with the same arguments has no further effect.
	Idempotent bool `json:"idempotentHint"`
	// OpenWorld: the tool reaches outside the host (for example the web).
	OpenWorld bool `json:"openWorldHint"`
}

// CommandArguments declares a tool's arguments that reach a shell or a
// running program (see [Tool.Commands]).
type CommandArguments struct {
	// Names lists the top-level string arguments the tool runs as a
	// command line (as bash -c runs bash's "command").
	Names []string
	// Lists names the top-level arguments whose values are arrays of
	// command lines, each run as bash -c runs bash's "command" (the
	// commands of codetools' shell).
	Lists []string
	// Typed, when set, returns the lines a call enters into a running
	// program (a terminal's keys): for each Enter the call types, the line
	// typed since the previous Enter, earlier calls' text included, with
	// the editing keys (backspace, Ctrl-U, Ctrl-C) applied. It returns no
	// lines for a call that enters none. It must be safe for concurrent
	// use and must not change what a later call sees: the tool records
	// what was typed when it types it.
	Typed func(ctx context.Context, args map[string]any) ([]string, error)
	// Sandbox, when set, declares that an OS sandbox confines every
	// process these commands start (and what they type reaches): what
	// they may write and read. Nil: nothing confines them, they write
	// wherever the host may. A layer that confines a tool to a folder
	// (package agent's sub-agent workspaces) relies on it.
	Sandbox *CommandSandbox
}

// CommandSandbox is what an OS sandbox lets a tool's commands reach (see
// [CommandArguments.Sandbox]). Paths are absolute and clean.
type CommandSandbox struct {
	// Writable lists the folders the commands may write, beside a
	// temporary folder of each call's own (removed after it, reached by
	// no other call); empty for a read-only sandbox.
	Writable []string
	// Readable lists the folders they may read beside Writable and the
	// system folders (/usr, /bin, /lib*, /etc, /opt, /sys).
	Readable []string
}

// Lines returns the command lines a call with args runs (its Names and
// Lists arguments, in that order) and the lines it types (Typed's), the
// one reading of the declaration every checker of commands shares. A list
// holding something other than text is an error, as Typed's error is. A
// nil c declares none.
func (c *CommandArguments) Lines(ctx context.Context, args map[string]any) (run, typed []string, err error) {
	if c == nil {
		return nil, nil, nil
	}
	for _, name := range c.Names {
		if v, ok := args[name].(string); ok {
			run = append(run, v)
		}
	}
	for _, name := range c.Lists {
		switch vs := args[name].(type) {
		case []any:
			for _, v := range vs {
				s, ok := v.(string)
				if !ok {
					return nil, nil, fmt.Errorf("argument %q holds a %T, not a command line", name, v)
				}
				run = append(run, s)
			}
		case []string:
			run = append(run, vs...)
		}
	}
	if c.Typed != nil {
		if typed, err = c.Typed(ctx, args); err != nil {
			return nil, nil, err
		}
	}
	return run, typed, nil
}

// schemaCache holds the compiled schema shared by all copies of a Tool.
type schemaCache struct {
	mu       sync.Mutex
	source   map[string]any // the Parameters map the schema was compiled from
	compiled *schema.Schema
}

// NewTool returns a validated Tool. A schema without "properties" gets an
// empty "properties" object (OpenAI rejects it otherwise); the caller's map
// is not modified.
func NewTool(name, description string, parameters map[string]any) (Tool, error) {
	t := Tool{Name: name, Description: description, Parameters: normalizeParameters(parameters)}
	t.schema = &schemaCache{}
	if err := t.Validate(); err != nil {
		return Tool{}, err
	}
	return t, nil
}

// MustTool is like [NewTool] but panics on an invalid definition. Use it for
// tools defined in code, where a bad definition is a programming error.
func MustTool(name, description string, parameters map[string]any) Tool {
	t, err := NewTool(name, description, parameters)
	if err != nil {
		panic(err)
	}
	return t
}

// ToolFromMap builds a validated Tool from a map as decoded from YAML or
// JSON. The schema may be under "parameters", "input_schema" (Anthropic) or
// "inputSchema" (MCP); "annotations" may use MCP's hint names (readOnlyHint,
// destructiveHint, idempotentHint, openWorldHint). Errors name the bad field.
func ToolFromMap(m map[string]any) (Tool, error) {
	var t Tool
	name, err := stringField(m, "name", true)
	if err != nil {
		return Tool{}, err
	}
	t.Name = name
	if t.Description, err = stringField(m, "description", false); err != nil {
		return Tool{}, err
	}
	var params any
	found := false
	for _, key := range []string{"parameters", "input_schema", "inputSchema"} {
		if v, ok := m[key]; ok && v != nil {
			params, found = v, true
			break
		}
	}
	if found {
		pm, ok := params.(map[string]any)
		if !ok {
			return Tool{}, fmt.Errorf("%w %q: parameters must be a JSON Schema object, got %s", ErrInvalidTool, name, jsonTypeName(params))
		}
		t.Parameters = pm
	}
	if a, ok := m["annotations"]; ok && a != nil {
		am, ok := a.(map[string]any)
		if !ok {
			return Tool{}, fmt.Errorf("%w %q: annotations must be an object, got %s", ErrInvalidTool, name, jsonTypeName(a))
		}
		ann := &Annotations{}
		for key, dst := range map[string]*bool{
			"readOnlyHint": &ann.ReadOnly, "destructiveHint": &ann.Destructive,
			"idempotentHint": &ann.Idempotent, "openWorldHint": &ann.OpenWorld,
		} {
			v, ok := am[key]
			if !ok || v == nil {
				continue
			}
			b, ok := v.(bool)
			if !ok {
				return Tool{}, fmt.Errorf("%w %q: annotations.%s must be a boolean, got %s", ErrInvalidTool, name, key, jsonTypeName(v))
			}
			*dst = b
		}
		t.Annotations = ann
	}
	if md, ok := m["metadata"]; ok && md != nil {
		mm, ok := md.(map[string]any)
		if !ok {
			return Tool{}, fmt.Errorf("%w %q: metadata must be an object, got %s", ErrInvalidTool, name, jsonTypeName(md))
		}
		t.Metadata = mm
	}
	return NewToolFrom(t)
}

// NewToolFrom validates a Tool built as a struct literal (for example with
// Annotations and Metadata set) and returns it ready for cached validation,
// normalised as [NewTool] does.
func NewToolFrom(t Tool) (Tool, error) {
	t.Parameters = normalizeParameters(t.Parameters)
	t.schema = &schemaCache{}
	if err := t.Validate(); err != nil {
		return Tool{}, err
	}
	return t, nil
}

func stringField(m map[string]any, key string, required bool) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("%w: field %q is required", ErrInvalidTool, key)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: field %q must be a string, got %s", ErrInvalidTool, key, jsonTypeName(v))
	}
	return s, nil
}

// normalizeParameters returns a shallow copy of p with "type": "object" and
// "properties": {} filled in where missing. A nil map becomes an empty object
// schema.
func normalizeParameters(p map[string]any) map[string]any {
	if p == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	_, hasType := p["type"]
	hasProps := !isNilProperties(p["properties"])
	if hasType && hasProps {
		return p
	}
	out := maps.Clone(p)
	if !hasType {
		out["type"] = "object"
	}
	if !hasProps {
		out["properties"] = map[string]any{}
	}
	return out
}

// isNilProperties reports a missing or null "properties" value.
func isNilProperties(v any) bool {
	if v == nil {
		return true
	}
	m, ok := v.(map[string]any)
	return ok && m == nil
}

// Validate reports whether the tool is well-defined: a name every provider
// accepts, a non-empty description, and parameters that are a JSON Schema of
// "type": "object" that compiles. The error names the bad field.
func (t Tool) Validate() error {
	if !namePattern.MatchString(t.Name) {
		return fmt.Errorf("%w %q: name must match ^[a-zA-Z0-9_-]{1,64}$ (letters, digits, '_' and '-', at most 64)", ErrInvalidTool, t.Name)
	}
	if strings.TrimSpace(t.Description) == "" {
		return fmt.Errorf("%w %q: description is empty; say what the tool does and when to use it", ErrInvalidTool, t.Name)
	}
	if t.Parameters == nil {
		return fmt.Errorf("%w %q: parameters is missing; use {\"type\": \"object\", \"properties\": {}} for a tool without arguments", ErrInvalidTool, t.Name)
	}
	if typ, ok := t.Parameters["type"]; !ok || typ != "object" {
		return fmt.Errorf("%w %q: parameters must be a JSON Schema with \"type\": \"object\", got type %v", ErrInvalidTool, t.Name, typ)
	}
	if _, err := t.compiledSchema(); err != nil {
		return err
	}
	return nil
}

// compiledSchema returns the tool's compiled schema, compiling it at most once
// per Parameters map for tools built by a constructor.
func (t Tool) compiledSchema() (*schema.Schema, error) {
	c := t.schema
	if c == nil {
		return t.compile()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.compiled != nil && sameMap(c.source, t.Parameters) {
		return c.compiled, nil
	}
	s, err := t.compile()
	if err != nil {
		return nil, err
	}
	c.compiled, c.source = s, t.Parameters
	return s, nil
}

func (t Tool) compile() (*schema.Schema, error) {
	s, err := schema.Compile(t.Parameters)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidTool, t.Name, err)
	}
	return s, nil
}

func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// ValidateArguments checks args against the tool's parameter schema. The
// schema is compiled once and cached; ValidateArguments is safe for
// concurrent use. The error wraps [ErrInvalidArguments] and lists every
// violation with its JSON pointer, for example:
//
//	invalid arguments for tool "read_file": /offset: expected integer, but got string
//
// The work is bounded: past the steps [ValidationSteps] allows, the
// arguments are refused with an error wrapping [ErrSchemaTooComplex] too.
func (t Tool) ValidateArguments(args map[string]any) error {
	return t.ValidateArgumentsContext(context.Background(), args)
}

// ValidateArgumentsContext is [Tool.ValidateArguments] answering by the
// end of ctx: when ctx ends first, it returns ctx's error at once, and the
// validation still running stops within a few hundred steps. A panic of
// the validator is returned as a [*PanicError].
func (t Tool) ValidateArgumentsContext(ctx context.Context, args map[string]any) error {
	s, err := t.compiledSchema()
	if err != nil {
		return err
	}
	if s.FastValid(args) {
		return nil
	}
	var v any = args
	if args == nil {
		v = map[string]any{}
	} else if !schema.IsJSONValue(args) {
		// Arguments built in Go may hold []string, structs, int16, ...:
		// bring them to their JSON form first.
		data, err := json.Marshal(args)
		if err != nil {
			return fmt.Errorf("%w for tool %q: arguments cannot be encoded as JSON: %w", ErrInvalidArguments, t.Name, err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("%w for tool %q: %w", ErrInvalidArguments, t.Name, err)
		}
		v = m
	}
	if bad := schema.NonJSONNumbers(v); len(bad) > 0 {
		// The validator cannot judge them (and panics on some).
		return &ArgumentsError{Tool: t.Name, Violations: bad}
	}
	if err := s.Validate(ctx, v); err != nil {
		var bad schema.Violations
		var pe *schema.PanicError
		switch {
		case errors.As(err, &bad):
			return &ArgumentsError{Tool: t.Name, Violations: bad}
		case errors.As(err, &pe):
			return &PanicError{Value: pe.Value, Stack: pe.Stack}
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			return fmt.Errorf("validating the arguments of tool %q did not finish: %w", t.Name, err)
		case errors.Is(err, ErrSchemaTooComplex):
			return fmt.Errorf("%w for tool %q: %w; the tool's schema makes them too costly to check: send simpler arguments, or simplify the schema (fewer oneOf/anyOf branches and references)", ErrInvalidArguments, t.Name, err)
		}
		return fmt.Errorf("%w for tool %q: %w", ErrInvalidArguments, t.Name, err)
	}
	return nil
}

// ArgumentsError reports arguments that do not satisfy a tool's schema. It
// wraps [ErrInvalidArguments].
type ArgumentsError struct {
	// Tool is the tool's name.
	Tool string
	// Violations lists each problem as "JSON pointer: message".
	Violations []string
}

// Error lists every violation.
func (e *ArgumentsError) Error() string {
	return fmt.Sprintf("invalid arguments for tool %q: %s", e.Tool, strings.Join(e.Violations, "; "))
}

// Unwrap returns [ErrInvalidArguments].
func (e *ArgumentsError) Unwrap() error { return ErrInvalidArguments }

// ErrSchemaTooComplex is wrapped by the error of a schema refused for its
// complexity: one above a bound on [Tool.SchemaNodes] (mcp.Connect's, for
// a server's tools), and the arguments whose validation took more than
// [ValidationSteps] steps.
var ErrSchemaTooComplex = schema.ErrTooComplex

// DefaultMaxSchemaNodes is the bound on [Tool.SchemaNodes] that schemas
// from outside the host (an MCP server's tools) must keep to by default.
// Hand-written tool schemas stay far below it; a schema whose references
// multiply (each level of $defs naming the one below twice, say) passes it
// within a few levels.
const DefaultMaxSchemaNodes = 20_000

// The work of validating one call's arguments with the full validator is
// bounded: the number of times a (sub)schema is applied to a part of the
// arguments may not pass ValidationSteps plus ValidationStepsPerValue for
// each JSON value in the arguments (each key's value, each element, the
// object itself). Past it the call is refused with an error wrapping
// [ErrSchemaTooComplex] and [ErrInvalidArguments]. Ordinary arguments take
// a few steps per value; a schema whose oneOf/anyOf/$ref branches multiply
// takes exponentially many, and is stopped here.
const (
	ValidationSteps         = schema.Steps
	ValidationStepsPerValue = schema.StepsPerValue
)

// SchemaNodes measures the complexity of the tool's parameter schema: the
// number of (sub)schemas it would have with every reference ($ref,
// $recursiveRef, $dynamicRef) replaced by the schema it names, a reference
// that recurses into itself counted once. A plain schema's count is the
// number of its schema objects; a schema whose levels each name the level
// below twice doubles per level. The count saturates at 1<<30. The error
// is the schema's, when it does not compile.
func (t Tool) SchemaNodes() (int, error) {
	s, err := t.compiledSchema()
	if err != nil {
		return 0, err
	}
	return s.Nodes(), nil
}

// CheckSchemaNodes returns an error wrapping [ErrSchemaTooComplex] and
// [ErrInvalidTool], naming the tool, its [Tool.SchemaNodes] and max, when
// the schema is above max, and the schema's error when it does not
// compile.
func (t Tool) CheckSchemaNodes(max int) error {
	n, err := t.SchemaNodes()
	if err != nil {
		return err
	}
	if n > max {
		return fmt.Errorf("%w %q: %w: its parameter schema expands to %d subschemas once its references are followed, above the bound of %d; inline fewer references or use fewer oneOf/anyOf branches",
			ErrInvalidTool, t.Name, ErrSchemaTooComplex, n, max)
	}
	return nil
}

// jsonTypeName names the JSON type of a decoded value, for error messages.
func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case float64, json.Number, int, int64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// UnmarshalJSON decodes a Tool and prepares its schema cache, so that a
// decoded Tool validates arguments without recompiling. It does not validate
// the definition; call [Tool.Validate] for that.
func (t *Tool) UnmarshalJSON(data []byte) error {
	type plain Tool
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*t = Tool(p)
	t.schema = &schemaCache{}
	return nil
}
