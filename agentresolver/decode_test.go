package agentresolver_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
)

// decodeInto returns a Func handler that stores its decoded arguments.
func decodeInto[A any](t *testing.T, got *A) agentresolver.Handler {
	t.Helper()
	h := agentresolver.Func("t", "A tool for tests.", func(_ context.Context, a A) (string, error) {
		*got = a
		return "ok", nil
	})
	_, err := agentresolver.New(h)
	require.NoError(t, err)
	return h
}

func TestDecodeSnapshotArgs(t *testing.T) {
	var got snapshotArgs
	h := decodeInto(t, &got)
	args := map[string]any{
		"id": "r1", "name": "Ada", "age": 36.0, "level": "high", "priority": 2.0,
		"tags":   []any{"red", "green"},
		"home":   map[string]any{"street": "1 Main St", "city": "London", "zip": "N1", "invented": true},
		"others": []any{map[string]any{"street": "2 High St", "city": "Oxford"}},
		"scores": map[string]any{"maths": 19.5},
		"extra":  map[string]any{"k": []any{1.0}},
		"when":   "2025-03-01T10:00:00Z", "deadline": "2025-03-02T10:00:00.5+01:00",
		"anything": map[string]any{"x": "y"},
		"blob":     "aGVsbG8=", "pair": []any{1.0, 2.0}, "count": 7.0, "NoTag": true,
		"Ignored": "not decoded", "invented": "ignored",
	}
	out, err := h.Execute(context.Background(), args)
	require.NoError(t, err)
	assert.Equal(t, "ok", out)
	zip := "N1"
	age := 36
	deadline := time.Date(2025, 3, 2, 10, 0, 0, 5e8, time.FixedZone("", 3600))
	want := snapshotArgs{
		Base: Base{ID: "r1"}, Name: "Ada", Age: &age, Level: "high", Priority: 2,
		Tags:     []string{"red", "green"},
		Home:     Address{Street: "1 Main St", City: "London", Zip: &zip},
		Others:   []Address{{Street: "2 High St", City: "Oxford"}},
		Scores:   map[string]float64{"maths": 19.5},
		Extra:    map[string]any{"k": []any{1.0}},
		When:     time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC),
		Anything: map[string]any{"x": "y"},
		Blob:     []byte("hello"), Pair: [2]int{1, 2}, Count: 7, NoTag: true,
	}
	require.NotNil(t, got.Deadline)
	assert.True(t, deadline.Equal(*got.Deadline))
	got.Deadline = nil
	assert.Equal(t, want, got)

	// The same arguments, through JSON, decode the same way as encoding/json.
	data, err := json.Marshal(args)
	require.NoError(t, err)
	var viaJSON snapshotArgs
	require.NoError(t, json.Unmarshal(data, &viaJSON))
	viaJSON.Deadline = nil
	assert.Equal(t, viaJSON, got)
}

type decodeArgs struct {
	S   string            `json:"s,omitempty" jsonschema_enum:"a,b"`
	I   int               `json:"i,omitempty"`
	I8  int8              `json:"i8,omitempty"`
	U   uint              `json:"u,omitempty"`
	U16 uint16            `json:"u16,omitempty" jsonschema_enum:"1,2"`
	F   float64           `json:"f,omitempty"`
	F32 float32           `json:"f32,omitempty"`
	B   bool              `json:"b,omitempty"`
	L   []int             `json:"l,omitempty"`
	A   [2]string         `json:"a,omitempty"`
	M   map[string]int    `json:"m,omitempty"`
	P   *Address          `json:"p,omitempty"`
	T   time.Time         `json:"t,omitempty"`
	By  []byte            `json:"by,omitempty"`
	IP  netip.Addr        `json:"ip,omitempty"`
	Any any               `json:"any,omitempty"`
	LA  []any             `json:"la,omitempty"`
	NS  map[string]string `json:"ns,omitempty"`
	Req string            `json:"req"`
}

func TestDecodeValues(t *testing.T) {
	base := func(kv ...any) map[string]any {
		m := map[string]any{"req": "r"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want decodeArgs
	}{
		{"only required", base(), decodeArgs{Req: "r"}},
		{"enum string", base("s", "b"), decodeArgs{Req: "r", S: "b"}},
		{"integral float", base("i", 3.0), decodeArgs{Req: "r", I: 3}},
		{"Go int", base("i", 5), decodeArgs{Req: "r", I: 5}},
		{"Go int64", base("i", int64(-5)), decodeArgs{Req: "r", I: -5}},
		{"json.Number", base("i", json.Number("12"), "f", json.Number("1.5")), decodeArgs{Req: "r", I: 12, F: 1.5}},
		{"json.Number exponent", base("i", json.Number("1e3")), decodeArgs{Req: "r", I: 1000}},
		{"int8 bounds", base("i8", -128.0), decodeArgs{Req: "r", I8: -128}},
		{"uint large", base("u", 1e18), decodeArgs{Req: "r", U: 1e18}},
		{"uint Go int", base("u", 3, "u16", int64(1)), decodeArgs{Req: "r", U: 3, U16: 1}},
		{"uint json.Number", base("u", json.Number("18446744073709551615")), decodeArgs{Req: "r", U: math.MaxUint64}},
		{"uint json.Number exponent", base("u", json.Number("2e3")), decodeArgs{Req: "r", U: 2000}},
		{"number from Go ints", base("f", 2, "f32", int64(3)), decodeArgs{Req: "r", F: 2, F32: 3}},
		{"uint enum", base("u16", 2.0), decodeArgs{Req: "r", U16: 2}},
		{"float32", base("f32", 0.5), decodeArgs{Req: "r", F32: 0.5}},
		{"bool", base("b", true), decodeArgs{Req: "r", B: true}},
		{"slice", base("l", []any{1.0, 2.0}), decodeArgs{Req: "r", L: []int{1, 2}}},
		{"empty slice", base("l", []any{}), decodeArgs{Req: "r", L: []int{}}},
		{"array", base("a", []any{"x", "y"}), decodeArgs{Req: "r", A: [2]string{"x", "y"}}},
		{"map", base("m", map[string]any{"k": 1.0}), decodeArgs{Req: "r", M: map[string]int{"k": 1}}},
		{"pointer struct", base("p", map[string]any{"street": "s", "city": "c"}), decodeArgs{Req: "r", P: &Address{Street: "s", City: "c"}}},
		{"time", base("t", "2024-02-29T23:59:59Z"), decodeArgs{Req: "r", T: time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC)}},
		{"bytes", base("by", "AAE="), decodeArgs{Req: "r", By: []byte{0, 1}}},
		{"text unmarshaler", base("ip", "10.0.0.1"), decodeArgs{Req: "r", IP: netip.MustParseAddr("10.0.0.1")}},
		{"any null", base("any", nil), decodeArgs{Req: "r"}},
		{"any number", base("any", 1.5), decodeArgs{Req: "r", Any: 1.5}},
		{"[]any", base("la", []any{"x", 1.0}), decodeArgs{Req: "r", LA: []any{"x", 1.0}}},
		{"Go []string normalised", base("l", []int{4}, "ns", map[string]string{"a": "b"}), decodeArgs{Req: "r", L: []int{4}, NS: map[string]string{"a": "b"}}},
		{"Go int32 normalised", base("i8", int32(7)), decodeArgs{Req: "r", I8: 7}},
		{"invented properties ignored", base("zzz", 1.0, "p", map[string]any{"street": "s", "city": "c", "planet": "Mars"}), decodeArgs{Req: "r", P: &Address{Street: "s", City: "c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got decodeArgs
			h := decodeInto(t, &got)
			_, err := h.Execute(context.Background(), tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestDecodeViolations(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"nil arguments", nil, []string{"/req: missing required property (add it)"}},
		{"missing required", map[string]any{}, []string{"/req: missing required property (add it)"}},
		{"wrong type", map[string]any{"req": 1.0}, []string{"/req: expected string, but got number"}},
		{"null for string", map[string]any{"req": nil}, []string{"/req: expected string, but got null"}},
		{"every bad argument named", map[string]any{"req": "r", "s": "c", "i": "3", "b": "yes"}, []string{
			"/b: expected boolean, but got string",
			"/i: expected integer, but got string",
			`/s: value must be one of "a", "b"`,
		}},
		{"fraction for integer", map[string]any{"req": "r", "i": 2.5}, []string{"/i: expected integer, but got number"}},
		{"int8 too small", map[string]any{"req": "r", "i8": -129.0}, []string{"/i8: must be >= -128 but found -129"}},
		{"int8 too large", map[string]any{"req": "r", "i8": 128.0}, []string{"/i8: must be <= 127 but found 128"}},
		{"negative uint", map[string]any{"req": "r", "u": -1.0}, []string{"/u: must be >= 0 but found -1"}},
		{"uint enum", map[string]any{"req": "r", "u16": 3.0}, []string{`/u16: value must be one of "1", "2"`}},
		{"int out of range", map[string]any{"req": "r", "i": 1e19}, []string{"/i: 1e+19 is out of range for int"}},
		{"uint out of range", map[string]any{"req": "r", "u": 1e20}, []string{"/u: 1e+20 is out of range for uint"}},
		{"uint fraction", map[string]any{"req": "r", "u": 0.5}, []string{"/u: expected integer, but got number"}},
		{"uint negative Go int", map[string]any{"req": "r", "u": -2, "u16": int64(-1)}, []string{"/u16: must be >= 0 but found -1", "/u: must be >= 0 but found -2"}},
		{"uint json.Number negative", map[string]any{"req": "r", "u": json.Number("-4")}, []string{"/u: must be >= 0 but found -4"}},
		{"uint json.Number fraction", map[string]any{"req": "r", "u": json.Number("1.5")}, []string{"/u: expected integer, but got number"}},
		{"uint json.Number too large", map[string]any{"req": "r", "u": json.Number("1e30")}, []string{"/u: 1e30 is out of range for uint"}},
		{"uint string", map[string]any{"req": "r", "u": "1"}, []string{"/u: expected integer, but got string"}},
		{"int json.Number fraction", map[string]any{"req": "r", "i": json.Number("1.5")}, []string{"/i: expected integer, but got number"}},
		{"int json.Number too large", map[string]any{"req": "r", "i": json.Number("1e30")}, []string{"/i: 1e30 is out of range for int"}},
		{"number json.Number too large", map[string]any{"req": "r", "f": json.Number("1e400")}, []string{"/f: 1e400 is out of range for float64"}},
		{"number string", map[string]any{"req": "r", "f": "1.5"}, []string{"/f: expected number, but got string"}},
		{"float32 out of range", map[string]any{"req": "r", "f32": 1e39}, []string{"/f32: 1e+39 is out of range for float32"}},
		{"nested", map[string]any{"req": "r", "p": map[string]any{"street": 1.0}}, []string{
			"/p/city: missing required property (add it)",
			"/p/street: expected string, but got number",
		}},
		{"slice element", map[string]any{"req": "r", "l": []any{1.0, "two"}}, []string{"/l/1: expected integer, but got string"}},
		{"array length", map[string]any{"req": "r", "a": []any{"x"}}, []string{"/a: exactly 2 items required, but found 1 items"}},
		{"map value", map[string]any{"req": "r", "m": map[string]any{"a/b": "x"}}, []string{"/m/a~1b: expected integer, but got string"}},
		{"object for array", map[string]any{"req": "r", "l": map[string]any{}}, []string{"/l: expected array, but got object"}},
		{"bad date-time", map[string]any{"req": "r", "t": "yesterday"}, []string{`/t: expected a date-time in RFC 3339 form such as 2006-01-02T15:04:05Z, but got "yesterday"`}},
		{"bad base64", map[string]any{"req": "r", "by": "!!"}, []string{"/by: expected base64-encoded data: illegal base64 data at input byte 0"}},
		{"bad text", map[string]any{"req": "r", "ip": "10.0.0.300"}, []string{`/ip: invalid netip.Addr: ParseAddr("10.0.0.300"): IPv4 field has value >255`}},
		{"Go value, after normalising", map[string]any{"req": []string{"x"}}, []string{"/req: expected string, but got array"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			h := agentresolver.Func("t", "A tool for tests.", func(context.Context, decodeArgs) (string, error) {
				called = true
				return "", nil
			})
			_, err := h.Execute(context.Background(), tc.args)
			require.Error(t, err)
			assert.False(t, called, "the function must not run on invalid arguments")
			assert.ErrorIs(t, err, llmtoolkit.ErrInvalidArguments)
			var ae *llmtoolkit.ArgumentsError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, "t", ae.Tool)
			assert.Equal(t, tc.want, ae.Violations)
		})
	}
}

func TestDecodeUnencodableArguments(t *testing.T) {
	h := agentresolver.Func("t", "A tool for tests.", noop[decodeArgs])
	_, err := h.Execute(context.Background(), map[string]any{"req": "r", "i": math.Inf(1), "l": make(chan int)})
	require.Error(t, err)
	assert.ErrorIs(t, err, llmtoolkit.ErrInvalidArguments)
}

func TestDecodePointerArgs(t *testing.T) {
	var got *Address
	h := decodeInto(t, &got)
	_, err := h.Execute(context.Background(), map[string]any{"street": "s", "city": "c"})
	require.NoError(t, err)
	assert.Equal(t, &Address{Street: "s", City: "c"}, got)
}

// jsonOnly has a custom UnmarshalJSON: any JSON value, its method decides.
type jsonOnly struct{ n int }

func (j *jsonOnly) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		return errors.New("want a quoted number")
	}
	j.n = len(strings.Trim(string(b), `"`))
	return nil
}

func TestDecodeJSONUnmarshaler(t *testing.T) {
	type args struct {
		J jsonOnly `json:"j" jsonschema:"a custom type"`
	}
	assert.Equal(t, map[string]any{"description": "a custom type"}, schemaOf[args](t).Parameters["properties"].(map[string]any)["j"])
	var got args
	h := decodeInto(t, &got)
	_, err := h.Execute(context.Background(), map[string]any{"j": "abc"})
	require.NoError(t, err)
	assert.Equal(t, 3, got.J.n)
	_, err = h.Execute(context.Background(), map[string]any{"j": 1.0})
	require.ErrorContains(t, err, "/j: invalid agentresolver_test.jsonOnly: want a quoted number")
}
