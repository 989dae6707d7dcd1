package llmtoolkit

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panickyArg is an argument value built in Go whose JSON encoding panics:
// validation encodes such values, so it panics while validating.
type panickyArg struct{}

func (panickyArg) MarshalJSON() ([]byte, error) { panic("encoder bug") }

// TestExecuteValidationNeverPanics: Execute panicked on an integer argument
// that is NaN, ±Inf or an invalid json.Number (the validator dereferenced a
// nil *big.Rat). Such values are refused with a clear error, and a panic
// while validating becomes the call's error result like a tool's panic; the
// tool never runs, directly or through Compose.
func TestExecuteValidationNeverPanics(t *testing.T) {
	count := MustTool("count", "Counts.", map[string]any{"type": "object", "properties": map[string]any{
		"n": map[string]any{"type": "integer", "maximum": 10}}})
	tests := []struct {
		name    string
		n       any
		wantErr error
		want    string
	}{
		{"NaN", math.NaN(), ErrInvalidArguments, "/n: NaN is not a number JSON can hold"},
		{"+Inf", math.Inf(1), ErrInvalidArguments, "/n: +Inf is not a number JSON can hold"},
		{"-Inf", math.Inf(-1), ErrInvalidArguments, "/n: -Inf is not a number JSON can hold"},
		{"invalid json.Number", json.Number("1e"), ErrInvalidArguments, `/n: "1e" is not a valid JSON number`},
		{"json.Number beyond big.Rat", json.Number("1e999999999"), ErrInvalidArguments, `/n: "1e999999999" has an exponent too large to judge`},
		{"json.Number below big.Rat", json.Number("-1e-999999999"), ErrInvalidArguments, `/n: "-1e-999999999" has an exponent too large to judge`},
		{"encoding panics", panickyArg{}, ErrToolPanic, "encoder bug"},
	}
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	for _, tc := range tests {
		for _, wrap := range []string{"direct", "composed"} {
			t.Run(tc.name+"/"+wrap, func(t *testing.T) {
				stub := newStub(map[string]func(context.Context, Call) (string, error){"count": answer("counted")}, count)
				var r Resolver = stub
				if wrap == "composed" {
					r = Compose(stub)
				}
				var res Result
				require.NotPanics(t, func() {
					res = Execute(context.Background(), r, Call{ID: "c1", Name: "count", Arguments: map[string]any{"n": tc.n}})
				})
				require.True(t, res.IsError)
				require.ErrorIs(t, res.Err, tc.wantErr)
				assert.Contains(t, res.Content, tc.want)
				assert.Zero(t, stub.calls.Load(), "the tool did not run")
			})
		}
	}
	assert.Contains(t, logs.String(), "validator panicked", "the validator's panic is logged with its stack")
	assert.Equal(t, 2, strings.Count(logs.String(), "validator panicked"), "only the panicking encoder panics")
}
