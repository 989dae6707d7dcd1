package agentresolver_test

import (
	"context"
	"encoding/json"
	"flag"
	"math/big"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
)

var update = flag.Bool("update", false, "rewrite the schema snapshots in testdata")

type Address struct {
	Street string  `json:"street" jsonschema:"street and number"`
	City   string  `json:"city"`
	Zip    *string `json:"zip,omitempty"`
}

type Base struct {
	ID string `json:"id" jsonschema:"record id"`
}

// snapshotArgs is the representative struct of the schema snapshot: nested,
// optional, enum, slice, map, time, embedded, skipped and unexported fields.
type snapshotArgs struct {
	Base
	Name     string             `json:"name" jsonschema:"display name"`
	Age      *int               `json:"age,omitempty" jsonschema:"age in years"`
	Level    string             `json:"level" jsonschema_enum:"low, medium, high"`
	Priority int8               `json:"priority,omitempty" jsonschema_enum:"1,2,3"`
	Tags     []string           `json:"tags,omitempty" jsonschema:"labels" jsonschema_enum:"red,green"`
	Home     Address            `json:"home"`
	Others   []Address          `json:"others,omitempty"`
	Scores   map[string]float64 `json:"scores,omitempty"`
	Extra    map[string]any     `json:"extra,omitempty"`
	When     time.Time          `json:"when" jsonschema:"when it happens"`
	Deadline *time.Time         `json:"deadline,omitzero"`
	Anything any                `json:"anything,omitempty" jsonschema:"free-form"`
	Blob     []byte             `json:"blob,omitempty"`
	Pair     [2]int             `json:"pair,omitempty"`
	Count    uint16             `json:"count,omitempty"`
	NoTag    bool
	Ignored  string `json:"-"`
	//lint:ignore U1000 an unexported field, which the schema must leave out
	unexported int
}

func noop[A any](context.Context, A) (string, error) { return "", nil }

func schemaOf[A any](t *testing.T, opts ...agentresolver.Option) llmtoolkit.Tool {
	t.Helper()
	r, err := agentresolver.New(agentresolver.Func("t", "A tool for tests.", noop[A], opts...))
	require.NoError(t, err)
	return r.Tools()[0]
}

func TestSchemaSnapshot(t *testing.T) {
	tool := schemaOf[snapshotArgs](t)
	got, err := json.MarshalIndent(tool.Parameters, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", "snapshot_schema.json")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create the snapshot")
	assert.Equal(t, string(want), string(got))
}

// TestSchemaProviderRules walks every generated schema for what some
// provider refuses.
func TestSchemaProviderRules(t *testing.T) {
	for name, params := range map[string]map[string]any{
		"snapshot": schemaOf[snapshotArgs](t).Parameters,
		"pointer":  schemaOf[*snapshotArgs](t).Parameters,
		"empty":    schemaOf[struct{}](t).Parameters,
		"nested": schemaOf[struct {
			A struct {
				B struct{ C []map[string][]Address }
			}
		}](t).Parameters,
		"any": schemaOf[struct{ X, Y any }](t).Parameters,
		"text": schemaOf[struct {
			IP netip.Addr
			N  big.Int
			D  time.Duration
		}](t).Parameters,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := llmtoolkit.NewTool("t", "A tool for tests.", params)
			require.NoError(t, err)
			checkProviderRules(t, "", params)
		})
	}
}

func checkProviderRules(t *testing.T, at string, s any) {
	t.Helper()
	m, ok := s.(map[string]any)
	require.Truef(t, ok, "%s: sub-schema must be an object, got %#v", at, s)
	for _, k := range []string{"$ref", "$defs", "definitions"} {
		assert.NotContainsf(t, m, k, "%s: %s", at, k)
	}
	if typ, ok := m["type"]; ok {
		_, isString := typ.(string)
		assert.Truef(t, isString, "%s: type must be a single string, got %#v", at, typ)
	}
	if m["type"] == "object" {
		assert.Containsf(t, m, "properties", "%s: object without properties", at)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for k, v := range props {
			checkProviderRules(t, at+"/properties/"+k, v)
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if v, ok := m[k]; ok {
			checkProviderRules(t, at+"/"+k, v)
		}
	}
}

func TestSchemaRules(t *testing.T) {
	prop := func(t *testing.T, params map[string]any, name string) map[string]any {
		t.Helper()
		p, ok := params["properties"].(map[string]any)[name].(map[string]any)
		require.Truef(t, ok, "no property %q in %v", name, params)
		return p
	}
	type E struct {
		Inner string `json:"inner"`
	}
	type args struct {
		S    string            `json:"s"`
		B    bool              `json:"b"`
		I    int               `json:"i"`
		I8   int8              `json:"i8"`
		I32  int32             `json:"i32"`
		U    uint              `json:"u"`
		U8   uint8             `json:"u8"`
		F    float32           `json:"f"`
		P    *string           `json:"p"`
		Opt  string            `json:"opt,omitempty"`
		Zero string            `json:"zero,omitzero"`
		L    []int             `json:"l"`
		A    [3]string         `json:"a"`
		M    map[string]bool   `json:"m"`
		T    time.Time         `json:"t"`
		By   []byte            `json:"by"`
		Any  any               `json:"any" jsonschema:"anything at all"`
		IP   netip.Addr        `json:"ip"`
		D    time.Duration     `json:"d"`
		En   []string          `json:"en" jsonschema_enum:"x,y"`
		EnF  float64           `json:"enf" jsonschema_enum:"0.5,1"`
		NM   map[string]string `json:"nm"`
		E
	}
	params := schemaOf[args](t).Parameters
	for _, tc := range []struct {
		name string
		want map[string]any
	}{
		{"s", map[string]any{"type": "string"}},
		{"b", map[string]any{"type": "boolean"}},
		{"i", map[string]any{"type": "integer"}},
		{"i8", map[string]any{"type": "integer", "minimum": -128.0, "maximum": 127.0}},
		{"i32", map[string]any{"type": "integer", "minimum": -2147483648.0, "maximum": 2147483647.0}},
		{"u", map[string]any{"type": "integer", "minimum": 0.0}},
		{"u8", map[string]any{"type": "integer", "minimum": 0.0, "maximum": 255.0}},
		{"f", map[string]any{"type": "number"}},
		{"p", map[string]any{"type": "string"}},
		{"opt", map[string]any{"type": "string"}},
		{"l", map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}},
		{"a", map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 3.0, "maxItems": 3.0}},
		{"m", map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": map[string]any{"type": "boolean"}}},
		{"t", map[string]any{"type": "string", "format": "date-time"}},
		{"by", map[string]any{"type": "string", "contentEncoding": "base64"}},
		{"any", map[string]any{"description": "anything at all"}},
		{"ip", map[string]any{"type": "string"}},
		{"d", map[string]any{"type": "integer"}},
		{"en", map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"x", "y"}}}},
		{"enf", map[string]any{"type": "number", "enum": []any{0.5, 1.0}}},
		{"inner", map[string]any{"type": "string"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, prop(t, params, tc.name))
		})
	}
	assert.ElementsMatch(t, []any{"s", "b", "i", "i8", "i32", "u", "u8", "f", "p", "l", "a", "m", "t", "by", "any", "ip", "d", "en", "enf", "nm", "inner"},
		params["required"], "required = fields without omitempty/omitzero")
	assert.NotContains(t, params, "additionalProperties", "extra properties must stay allowed")
}

func TestSchemaFieldNames(t *testing.T) {
	type Inner struct {
		A string `json:"a"`
		B string `json:"b"`
	}
	type args struct {
		Inner
		B       string `json:"b"` // shallower: hides Inner.B
		Plain   string
		Skipped string `json:"-"`
		//lint:ignore SA5008 "-," names a field "-" in encoding/json, which the schema must follow
		Dash string `json:"-,"`
		//lint:ignore U1000 an unexported field, which the schema must leave out
		private string
	}
	params := schemaOf[args](t).Parameters
	props := params["properties"].(map[string]any)
	assert.ElementsMatch(t, []string{"a", "b", "Plain", "-"}, keysOf(props))
	var got args
	r, err := agentresolver.New(agentresolver.Func("t", "A tool for tests.", func(_ context.Context, a args) (string, error) {
		got = a
		return "", nil
	}))
	require.NoError(t, err)
	_, err = r.Resolve(context.Background(), llmtoolkit.Call{Name: "t", Arguments: map[string]any{
		"a": "A", "b": "B", "Plain": "P", "-": "D", "Skipped": "no", "private": "no",
	}})
	require.NoError(t, err)
	assert.Equal(t, args{Inner: Inner{A: "A"}, B: "B", Plain: "P", Dash: "D"}, got)
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

type recursive struct {
	Name     string       `json:"name"`
	Children []*recursive `json:"children"`
}

type recursiveList []recursiveList

type recursiveMap struct {
	M map[string]recursiveMap `json:"m"`
}

type ambiguousA struct{ X string }
type ambiguousB struct{ X string }

func TestFuncBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    agentresolver.Handler
		want string
	}{
		{"recursive struct", agentresolver.Func("t", "d", noop[recursive]), "contains itself"},
		{"recursive slice", agentresolver.Func("t", "d", noop[struct{ L recursiveList }]), "contains itself"},
		{"recursive map", agentresolver.Func("t", "d", noop[recursiveMap]), "contains itself"},
		{"chan", agentresolver.Func("t", "d", noop[struct{ C chan int }]), "field C (chan int): chan values cannot be tool arguments"},
		{"func", agentresolver.Func("t", "d", noop[struct{ F func() }]), "func values cannot be tool arguments"},
		{"complex", agentresolver.Func("t", "d", noop[struct{ C complex128 }]), "complex128 values cannot be tool arguments"},
		{"int map key", agentresolver.Func("t", "d", noop[struct{ M map[int]string }]), "map keys must be strings"},
		{"interface with methods", agentresolver.Func("t", "d", noop[struct{ S interface{ String() string } }]), "interface with methods"},
		{"string option", agentresolver.Func("t", "d", noop[struct {
			N int `json:"n,string"`
		}]), "the json ,string option is not supported"},
		{"empty description", agentresolver.Func("t", "d", noop[struct {
			N int `jsonschema:""`
		}]), "empty jsonschema tag"},
		{"WORD= description", agentresolver.Func("t", "d", noop[struct {
			N int `jsonschema:"minimum=3"`
		}]), "must not begin with WORD="},
		{"enum on bool", agentresolver.Func("t", "d", noop[struct {
			B bool `jsonschema_enum:"true"`
		}]), "jsonschema_enum applies to string, integer and number fields"},
		{"enum bad int", agentresolver.Func("t", "d", noop[struct {
			N int8 `jsonschema_enum:"1,300"`
		}]), `value "300" is not a valid int8`},
		{"empty enum", agentresolver.Func("t", "d", noop[struct {
			S string `jsonschema_enum:""`
		}]), "empty jsonschema_enum tag"},
		{"ambiguous", agentresolver.Func("t", "d", noop[struct {
			ambiguousA
			ambiguousB
		}]), `both have the JSON name "X"`},
		{"embedded pointer", agentresolver.Func("t", "d", noop[struct{ *Base }]), "embed the struct by value"},
		{"not a struct", agentresolver.Func("t", "d", noop[string]), "must be a struct"},
		{"map args", agentresolver.Func("t", "d", noop[map[string]any]), "use a Handler for free-form arguments"},
		{"nil function", agentresolver.Func[struct{}]("t", "d", nil), "the function is nil"},
		{"bad name", agentresolver.Func("bad name", "d", noop[struct{}]), "name must match"},
		{"empty description of tool", agentresolver.Func("t", " ", noop[struct{}]), "description is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := agentresolver.New(tc.h)
			require.Error(t, err)
			assert.ErrorIs(t, err, llmtoolkit.ErrInvalidTool)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "handler 1")
			// The broken handler answers every call with the same error.
			_, execErr := tc.h.Execute(context.Background(), map[string]any{})
			assert.ErrorIs(t, execErr, llmtoolkit.ErrInvalidTool)
		})
	}
}
