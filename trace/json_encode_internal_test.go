package trace

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// TestAppendJSONIsMarshal: the columns' encoder writes what encoding/json
// writes, byte for byte, and declines what it does not encode.
func TestAppendJSONIsMarshal(t *testing.T) {
	for _, v := range []map[string]any{
		{},
		{"path": "cmd/main.go", "offset": float64(1), "limit": 200, "n": int64(-7)},
		{"html": "<a href=\"x\">&amp;</a>", "ctl": "\x00\x01\b\f\n\r\t\x1f\x7f", "bad": "a\xffb\xc3", "sep": "\u2028\u2029"},
		{"floats": []any{0.0, math.Copysign(0, -1), 1e-7, 1e-6, 123456789.125, 1e20, 1e21, 1.5e300, -2.5e-10, 5e-324}},
		{"nested": map[string]any{"b": []any{nil, true, false, "x", map[string]any{}}, "a": JSON{"z": 1.0}}, "nilslice": []any(nil), "nilmap": map[string]any(nil)},
		{"é": "ü", "a\xffkey": 1.0, "\u2028": "k", "<k>": "v"},
	} {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, ok := appendJSONObject(nil, v)
		require.True(t, ok, "%v", v)
		assert.Equal(t, string(want), string(got))
	}
	for _, v := range []map[string]any{
		{"nan": math.NaN()}, {"inf": math.Inf(1)}, {"other": int32(3)}, {"num": json.Number("1")}, {"deep": []any{map[string]any{"x": struct{}{}}}},
	} {
		_, ok := appendJSONObject(nil, v)
		assert.False(t, ok, "%v: left to encoding/json", v)
	}
}

// FuzzAppendJSONIsMarshal: any strings and numbers, as keys and values,
// encode as encoding/json encodes them.
func FuzzAppendJSONIsMarshal(f *testing.F) {
	f.Add("key", "value <&> \u2028 \xff", 1.5, int64(3))
	f.Add("", "\x00\"\\", 1e-7, int64(-1))
	f.Fuzz(func(t *testing.T, k, s string, x float64, n int64) {
		v := map[string]any{k: s, k + "f": x, k + "n": n, "list": []any{s, x, map[string]any{s: k}}}
		want, err := json.Marshal(v)
		got, ok := appendJSONObject(nil, v)
		if err != nil {
			if ok {
				t.Fatalf("encoding/json fails (%v), appendJSON gave %s", err, got)
			}
			return
		}
		if !ok || string(got) != string(want) {
			t.Fatalf("appendJSON %q (%v), encoding/json %q", got, ok, want)
		}
	})
}

// TestEncodeIsValue: a trace's column texts, encoded in one buffer, are
// what JSON.Value gives for each column, for the usual rows and for those
// JSON.Value normalizes (a NUL, a value appendJSON leaves to encoding/json).
func TestEncodeIsValue(t *testing.T) {
	for name, tc := range map[string]struct{ args, res JSON }{
		"usual":    {JSON{"path": "cmd/main.go", "limit": 200.0}, JSON{"content": "package main\n"}},
		"nil":      {nil, nil},
		"empty":    {JSON{}, JSON{"content": ""}},
		"NUL args": {JSON{"s": "a\x00b"}, JSON{"content": "ok"}},
		"NUL res":  {JSON{"s": "ok"}, JSON{"content": "a\x00b", "k\x00": 1.0}},
		"int32":    {JSON{"n": int32(3)}, JSON{"content": "x"}},
		"number":   {JSON{"s": "x"}, JSON{"n": json.Number("12")}},
	} {
		t.Run(name, func(t *testing.T) {
			tr := &Trace{Arguments: tc.args, Result: tc.res}
			require.NoError(t, tr.encode())
			a, err := tc.args.Value()
			require.NoError(t, err)
			r, err := tc.res.Value()
			require.NoError(t, err)
			assert.Equal(t, a, tr.argumentsText)
			assert.Equal(t, r, tr.resultText)
		})
	}
}

// TestCanonicalUUID: the fast path of uuidField takes exactly the strings
// uuid.Parse and String give back unchanged.
func TestCanonicalUUID(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"123e4567-e89b-12d3-a456-426614174000", true},
		{"00000000-0000-0000-0000-000000000000", true},
		{"123E4567-E89B-12D3-A456-426614174000", false},
		{"123e4567e89b12d3a456426614174000", false},
		{"{123e4567-e89b-12d3-a456-426614174000}", false},
		{"urn:uuid:123e4567-e89b-12d3-a456-426614174000", false},
		{"123e4567-e89b-12d3-a456-42661417400g", false},
		{"123e4567-e89b-12d3-a456_426614174000", false},
		{"123e4567-e89b-12d3-a456-4266141740000", false},
		{"", false},
	} {
		assert.Equal(t, tc.want, textutil.CanonicalUUID(tc.s), tc.s)
		s := tc.s
		msg := uuidField(&s, true)
		if tc.want {
			assert.Empty(t, msg)
			assert.Equal(t, tc.s, s)
		}
		if u, err := uuid.Parse(tc.s); err == nil {
			assert.Empty(t, msg)
			assert.Equal(t, u.String(), s, "canonicalised as uuid.Parse does")
		} else {
			assert.NotEmpty(t, msg)
		}
	}
}
