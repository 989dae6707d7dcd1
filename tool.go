package llmtoolkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
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

// schemaCache holds the compiled schema shared by all copies of a Tool.
type schemaCache struct {
	mu       sync.Mutex
	source   map[string]any // the Parameters map the schema was compiled from
	compiled *jsonschema.Schema
	fast     *fastSchema      // nil when the schema is outside the fast subset
	idle     []*meteredSchema // metered copies of source for the full validator, idle
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
func (t Tool) compiledSchema() (*jsonschema.Schema, error) {
	s, _, err := t.schemas()
	return s, err
}

// schemas returns the full compiled schema and its fast form (nil when the
// schema is outside the fast subset).
func (t Tool) schemas() (*jsonschema.Schema, *fastSchema, error) {
	c := t.schema
	if c == nil {
		s, err := compileSchema(t.Name, t.Parameters)
		return s, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.compiled != nil && sameMap(c.source, t.Parameters) {
		return c.compiled, c.fast, nil
	}
	s, err := compileSchema(t.Name, t.Parameters)
	if err != nil {
		return nil, nil, err
	}
	c.compiled, c.source, c.fast, c.idle = s, t.Parameters, compileFast(t.Parameters), nil
	return s, c.fast, nil
}

func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func compileSchema(name string, params map[string]any) (*jsonschema.Schema, error) {
	return compileSchemaWith(name, params, nil)
}

// compileSchemaWith compiles params, with m counting the validation's
// steps on every subschema when it is not nil.
func compileSchemaWith(name string, params map[string]any, m *meter) (*jsonschema.Schema, error) {
	data, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%w %q: parameters cannot be encoded as JSON: %w", ErrInvalidTool, name, err)
	}
	c := jsonschema.NewCompiler()
	// Never load remote or local documents named by a "$ref": a tool schema
	// is self-contained.
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("external schema references are not allowed (%s); inline the definition", s)
	}
	if m != nil {
		c.RegisterExtension("llmtoolkit-meter", nil, meterCompiler{m})
	}
	const url = "mem://tool/parameters.json"
	if err := c.AddResource(url, bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("%w %q: parameters is not valid JSON Schema: %w", ErrInvalidTool, name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%w %q: parameters is not valid JSON Schema: %w", ErrInvalidTool, name, err)
	}
	return s, nil
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
	_, fast, err := t.schemas()
	if err != nil {
		return err
	}
	if fast != nil && args != nil {
		if valid, ok := fast.valid(args); valid && ok {
			return nil
		}
	}
	var v any = args
	if args == nil {
		v = map[string]any{}
	} else if !isJSONValue(args) {
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
	if bad := nonJSONNumbers(v, "", nil); len(bad) > 0 {
		// The validator cannot judge them (and panics on some).
		return &ArgumentsError{Tool: t.Name, Violations: bad}
	}
	if err := t.fullValidate(ctx, v); err != nil {
		var ve *jsonschema.ValidationError
		var pe *PanicError
		switch {
		case errors.As(err, &ve):
			return &ArgumentsError{Tool: t.Name, Violations: violations(ve)}
		case errors.As(err, &pe):
			return pe
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

// violations flattens a validation error tree into its leaves.
func violations(ve *jsonschema.ValidationError) []string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := e.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			out = append(out, loc+": "+withFix(e.Message))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(out)
	return slices.Compact(out)
}

// withFix adds a hint to the messages whose fix is not obvious from the text.
func withFix(msg string) string {
	switch {
	case strings.HasPrefix(msg, "missing properties: "):
		// Sorted, so that the same call always reads the same.
		names := strings.Split(strings.TrimPrefix(msg, "missing properties: "), ", ")
		slices.Sort(names)
		return "missing properties: " + strings.Join(names, ", ") + " (add them)"
	case strings.HasPrefix(msg, "missing properties"):
		return msg + " (add them)"
	case strings.HasPrefix(msg, "additionalProperties"):
		return msg + " (remove them)"
	}
	return msg
}

// nonJSONNumbers lists, as violations, the numbers in v that JSON cannot
// hold: NaN, ±Inf and json.Number values that are not numbers.
func nonJSONNumbers(v any, at string, out []string) []string {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			out = append(out, pointer(at)+": "+fmt.Sprint(x)+" is not a number JSON can hold; send a finite number")
		}
	case json.Number:
		switch {
		case !isJSONNumber(string(x)):
			out = append(out, pointer(at)+": "+strconv.Quote(string(x))+" is not a valid JSON number")
		case !ratNumber(string(x)):
			out = append(out, pointer(at)+": "+strconv.Quote(string(x))+" has an exponent too large to judge; send a number a float64 can hold")
		}
	case map[string]any:
		for k, e := range x {
			out = nonJSONNumbers(e, at+"/"+escapePointer(k), out)
		}
	case []any:
		for i, e := range x {
			out = nonJSONNumbers(e, at+"/"+strconv.Itoa(i), out)
		}
	}
	return out
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}

// ratNumber reports whether the validator, which reads numbers as
// big.Rat, can read s (it cannot when the exponent is beyond big.Rat's
// limit, and then dereferences nil).
func ratNumber(s string) bool {
	_, ok := new(big.Rat).SetString(s)
	return ok
}

// pointer shows a JSON pointer, "/" for the root.
func pointer(at string) string {
	if at == "" {
		return "/"
	}
	return at
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

// isJSONValue reports whether v holds only the types encoding/json decodes
// into (and that the validator accepts).
func isJSONValue(v any) bool {
	switch x := v.(type) {
	case nil, bool, string, float64, json.Number, int, int64:
		return true
	case map[string]any:
		for _, e := range x {
			if !isJSONValue(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !isJSONValue(e) {
				return false
			}
		}
		return true
	}
	return false
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
