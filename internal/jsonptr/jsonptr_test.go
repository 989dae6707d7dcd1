package jsonptr

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestResolve(t *testing.T) {
	def := map[string]any{"type": "string"}
	root := map[string]any{"$defs": map[string]any{"a/b": def, "t~x": def, "n": 3}}
	for _, tc := range []struct {
		ref  string
		want map[string]any
		ok   bool
	}{
		{"#", root, true},
		{"#/$defs/a~1b", def, true},
		{"#/$defs/t~0x", def, true},
		{"#/$defs/n", nil, false},
		{"#/$defs/missing", nil, false},
		{"#/$defs/n/deeper", nil, false},
		{"other.json#/x", nil, false},
	} {
		got, ok := Resolve(root, tc.ref)
		assert.Equal(t, tc.ok, ok, tc.ref)
		assert.Equal(t, tc.want, got, tc.ref)
	}
	_, ok := Resolve(nil, "#")
	assert.False(t, ok, "a nil root names nothing")
}
