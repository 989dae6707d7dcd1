package trace

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
