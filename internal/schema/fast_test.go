package schema

import (
	"context"
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
	// format: asserted without "$schema" and for drafts 4 to 7, an annotation for 2019-09 and 2020-12.
	`{"type":"object","properties":{"email":{"type":"string","format":"email"},"when":{"format":"date-time"},"ip":{"type":"string","format":"ipv4"},"u":{"type":"string","format":"uri"}}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"email":{"type":"string","format":"email"},"id":{"type":"string","format":"uuid"}}}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"email":{"type":"string","format":"email"}}}`,
	`{"type":"object","properties":{"d":{"type":"string","format":"date","maxLength":10},"x":{"format":"no-such-format"}}}`,
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
		`{"$schema":"https://example.com/my-dialect","type":"object"}`,
		`{"type":"object","properties":{"a":{"$schema":"http://json-schema.org/draft-07/schema#"}}}`,
		`{"type":"object","properties":{"a":{"format":1}}}`,
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
		`{"email":"not-an-email"}`, `{"email":"a@b.co","when":"2024-01-02T03:04:05Z"}`, `{"when":"yesterday"}`, `{"ip":"300.1.1.1"}`,
		`{"ip":"10.0.0.1","u":"http://x/y"}`, `{"u":"not a uri"}`, `{"id":"123e4567-e89b-12d3-a456-426614174000"}`, `{"id":"nope"}`,
		`{"d":"2024-02-30"}`, `{"d":"2024-02-03","x":"anything"}`, `{"when":5}`,
	} {
		f.Add(seed)
	}
	type pair struct {
		name   string
		schema *Schema
		fast   *fastSchema
	}
	var pairs []pair
	for i, src := range fastTestSchemas {
		var m map[string]any
		require.NoError(f, json.Unmarshal([]byte(src), &m))
		s, err := Compile(m)
		require.NoError(f, err)
		pairs = append(pairs, pair{"t" + string(rune('a'+i)), s, compileFast(m)})
	}
	f.Fuzz(func(t *testing.T, args string) {
		var v map[string]any
		if json.Unmarshal([]byte(args), &v) != nil || v == nil {
			return
		}
		for _, p := range pairs {
			fullErr := p.schema.full.Validate(v)
			// Through the entry point too: both paths, one answer.
			proven := p.schema.FastValid(v)
			bounded := p.schema.Validate(context.Background(), v)
			assert.Equal(t, fullErr == nil, proven || bounded == nil, "schema %s, args %s", p.name, args)
			if proven {
				assert.NoError(t, fullErr, "schema %s, args %s: the fast path proved valid what the full validator refuses", p.name, args)
			}
			valid, ok := p.fast.valid(v)
			if !ok {
				continue
			}
			assert.Equal(t, fullErr == nil, valid, "schema %s, args %s: full validator says %v", p.name, args, fullErr)
		}
	})
}

// TestFormatOneBehaviour pins the documented rule: "format" is asserted
// (without "$schema" and for drafts 4 to 7) on the fast path exactly as on
// the full one.
func TestFormatOneBehaviour(t *testing.T) {
	tests := []struct {
		name, schema, args string
		valid              bool
	}{
		{"bad email refused", `{"type":"object","properties":{"email":{"type":"string","format":"email"}}}`, `{"email":"not-an-email"}`, false},
		{"good email accepted", `{"type":"object","properties":{"email":{"type":"string","format":"email"}}}`, `{"email":"ada@example.com"}`, true},
		{"draft 7 asserts", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"d":{"format":"date"}}}`, `{"d":"2024-13-01"}`, false},
		{"2020-12 annotates", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"d":{"format":"date"}}}`, `{"d":"2024-13-01"}`, true},
		{"unknown format ignored", `{"type":"object","properties":{"d":{"format":"colour"}}}`, `{"d":"blue"}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var schema, args map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.schema), &schema))
			require.NoError(t, json.Unmarshal([]byte(tc.args), &args))
			fast := compileFast(schema)
			require.NotNil(t, fast, "format is inside the fast subset")
			valid, ok := fast.valid(args)
			require.True(t, ok)
			assert.Equal(t, tc.valid, valid, "fast path")
			compiled, err := Compile(schema)
			require.NoError(t, err)
			assert.Equal(t, tc.valid, compiled.full.Validate(args) == nil, "full validator")
			assert.Equal(t, tc.valid, compiled.FastValid(args) || compiled.Validate(context.Background(), args) == nil, "FastValid, then Validate")
		})
	}
}
