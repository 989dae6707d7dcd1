package llmtoolkit

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fastTestSchemas cover every keyword of the fast subset.
var fastTestSchemas = []string{
	`{"type":"object","properties":{"path":{"type":"string","minLength":1,"maxLength":5},"offset":{"type":"integer","minimum":1},"limit":{"type":["integer","null"],"maximum":10}},"required":["path"]}`,
	`{"type":"object","properties":{"mode":{"enum":["a","b",1,true,null]},"ratio":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}},"additionalProperties":false}`,
	`{"type":"object","properties":{"edits":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"object","properties":{"oldText":{"type":"string"},"newText":{"type":"string"}},"required":["oldText","newText"]}}},"required":["edits"]}`,
	`{"type":"object","properties":{},"additionalProperties":{"type":"boolean"}}`,
	`{"type":"object","properties":{"any":{"description":"anything"},"n":{"type":"number","format":"double"}}}`,
}

func TestFastSchemaSubset(t *testing.T) {
	for _, src := range fastTestSchemas {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(src), &m))
		assert.NotNil(t, compileFast(m), src)
	}
	for _, src := range []string{
		`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"}]}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{}}}`,
		`{"type":"object","properties":{"a":{"pattern":"^x"}}}`,
		`{"type":"object","properties":{"a":{"enum":[[1]]}}}`,
		`{"type":"object","properties":{"a":true}}`,
		`{"type":"object","unknownKeyword":1}`,
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(src), &m))
		assert.Nil(t, compileFast(m), "outside the fast subset: %s", src)
	}
}

// FuzzFastSchemaAgreesWithFull checks that the fast path never disagrees
// with the full validator about validity.
func FuzzFastSchemaAgreesWithFull(f *testing.F) {
	for _, seed := range []string{
		`{"path":"abc","offset":2}`, `{"path":""}`, `{"path":"abcdef"}`, `{"path":"é€","offset":1.5}`, `{"limit":null,"path":"a"}`,
		`{"mode":"a","ratio":0.5}`, `{"mode":1.0,"ratio":1}`, `{"extra":1}`, `{"edits":[{"oldText":"a","newText":"b"}]}`,
		`{"edits":[]}`, `{"edits":[{"oldText":"a"}]}`, `{"x":true,"y":"no"}`, `{"n":1e308,"any":[{}]}`, `{"offset":9007199254740993}`,
	} {
		f.Add(seed)
	}
	type pair struct {
		tool Tool
		fast *fastSchema
	}
	var pairs []pair
	for i, src := range fastTestSchemas {
		var m map[string]any
		require.NoError(f, json.Unmarshal([]byte(src), &m))
		tool, err := NewTool("t"+string(rune('a'+i)), "d", m)
		require.NoError(f, err)
		pairs = append(pairs, pair{tool, compileFast(m)})
	}
	f.Fuzz(func(t *testing.T, args string) {
		var v map[string]any
		if json.Unmarshal([]byte(args), &v) != nil || v == nil {
			return
		}
		for _, p := range pairs {
			valid, ok := p.fast.valid(v)
			if !ok {
				continue
			}
			full, err := p.tool.compiledSchema()
			require.NoError(t, err)
			fullErr := full.Validate(v)
			assert.Equal(t, fullErr == nil, valid, "schema %s, args %s: full validator says %v", p.tool.Name, args, fullErr)
		}
	})
}
