package trace

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowNormalize is normalize's encoding path alone: the reference jsonCopy
// must agree with.
func slowNormalize(t *testing.T, v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return stripNUL(m).(map[string]any)
}

func TestJSONCopyAgreesWithEncoding(t *testing.T) {
	for name, v := range map[string]map[string]any{
		"plain":      {"path": "a.go", "offset": 1, "limit": int64(200), "ok": true, "none": nil, "f": 1.5},
		"nested":     {"a": []any{map[string]any{"b": []any{1, "x", nil}}}, "e": map[string]any{}},
		"bad utf8":   {"s": "a\xffb\xc3(c\xe2\x82"},
		"nul":        {"s": "a\x00b", "list": []any{"\x00"}},
		"big ints":   {"n": int64(1<<53 + 1), "m": math.MaxInt64, "neg": -7},
		"html, seps": {"s": "<a href='x'>&</a>\u2028\u2029"},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := jsonCopy(v)
			require.True(t, ok)
			assert.Equal(t, slowNormalize(t, v), got)
		})
	}
	for name, v := range map[string]map[string]any{
		"typed slice": {"s": []string{"a"}},
		"NUL key":     {"a\x00": 1},
		"bad key":     {"\xff": 1},
		"float32":     {"f": float32(0.1)},
		"NaN":         {"f": math.NaN()},
		"number":      {"n": json.Number("1")},
	} {
		t.Run("falls back: "+name, func(t *testing.T) {
			_, ok := jsonCopy(v)
			assert.False(t, ok)
		})
	}
}

// FuzzJSONCopyAgreesWithEncoding: for any string, key and number a model
// may send, the copy is what encoding and decoding would give.
func FuzzJSONCopyAgreesWithEncoding(f *testing.F) {
	f.Add("a\xffb", "key", int64(5), 2.5)
	f.Add("\x00", "k\u2028", int64(-1<<62), math.Copysign(0, -1))
	f.Fuzz(func(t *testing.T, s, key string, n int64, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		v := map[string]any{key: s, "n": n, "x": x, "list": []any{s, n, map[string]any{key: x}}}
		got, ok := jsonCopy(v)
		if !ok {
			return // keys with NUL or bad UTF-8 take the encoding path
		}
		assert.Equal(t, slowNormalize(t, v), got)
	})
}
