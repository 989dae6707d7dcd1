package agentresolver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
)

// The Func decoder checks arguments itself, for speed; these tests hold it
// to the published schema, as the generic validator (Tool.ValidateArguments)
// reads it: whatever the schema refuses the decoder refuses, and whatever
// the decoder accepts the schema accepts. The decoder may refuse more only
// for what cannot be decoded into the Go type.

// stricter reports whether a violation is one the schema cannot express.
func stricter(v string) bool {
	for _, s := range []string{"is out of range for", "expected a date-time", "expected base64-encoded data", ": invalid "} {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}

// checkAgreement runs one call through the schema and through the decoder.
func checkAgreement(t *testing.T, h agentresolver.Handler, tool llmtoolkit.Tool, argsJSON string) {
	t.Helper()
	call, err := llmtoolkit.ParseCall("", tool.Name, argsJSON)
	if err != nil {
		return
	}
	schemaErr := tool.ValidateArguments(call.Arguments)
	_, decodeErr := h.Execute(context.Background(), call.Arguments)
	switch {
	case schemaErr != nil && decodeErr == nil:
		t.Fatalf("%s: the schema refuses (%v) but the decoder accepts", argsJSON, schemaErr)
	case schemaErr == nil && decodeErr != nil:
		var ae *llmtoolkit.ArgumentsError
		require.ErrorAsf(t, decodeErr, &ae, "%s", argsJSON)
		for _, v := range ae.Violations {
			if !stricter(v) {
				t.Fatalf("%s: the schema accepts but the decoder refuses: %s", argsJSON, v)
			}
		}
	case schemaErr != nil:
		assert.ErrorIsf(t, decodeErr, llmtoolkit.ErrInvalidArguments, "%s", argsJSON)
	}
}

var agreementSeeds = []string{
	`{}`,
	`{"req":"r"}`,
	`{"req":null}`,
	`{"req":"r","s":"a","i":3,"i8":-128,"u":0,"u16":2,"f":1.5,"f32":2,"b":true}`,
	`{"req":"r","s":"c"}`,
	`{"req":"r","i":2.5}`,
	`{"req":"r","i":1e300}`,
	`{"req":"r","i8":128}`,
	`{"req":"r","u":-1}`,
	`{"req":"r","u16":3}`,
	`{"req":"r","f32":1e39}`,
	`{"req":"r","l":[1,2,3],"a":["x","y"],"m":{"k":1}}`,
	`{"req":"r","l":[1,"2"]}`,
	`{"req":"r","a":["x"]}`,
	`{"req":"r","m":{"k":"v"}}`,
	`{"req":"r","p":{"street":"s","city":"c","zip":"z"}}`,
	`{"req":"r","p":{"street":"s"}}`,
	`{"req":"r","p":null}`,
	`{"req":"r","t":"2025-01-01T00:00:00Z"}`,
	`{"req":"r","t":"not a date"}`,
	`{"req":"r","by":"aGk="}`,
	`{"req":"r","by":"***"}`,
	`{"req":"r","ip":"::1"}`,
	`{"req":"r","ip":"nope"}`,
	`{"req":"r","any":{"deep":[1,{"x":null}]},"la":[1,"a",null]}`,
	`{"req":"r","ns":{"a":"b","c":1}}`,
	`{"req":"r","extra":{"invented":true}}`,
	`{"req":1,"s":2,"i":"3","l":"x","m":[],"p":"s","b":0}`,
}

func TestDecoderAgreesWithSchema(t *testing.T) {
	h := agentresolver.Func("t", "A tool for tests.", noop[decodeArgs])
	tool := h.Definition()
	for _, args := range agreementSeeds {
		t.Run(args, func(t *testing.T) {
			checkAgreement(t, h, tool, args)
		})
	}
	snap := agentresolver.Func("t", "A tool for tests.", noop[snapshotArgs])
	for _, args := range []string{
		`{}`,
		`{"id":"1","name":"n","level":"low","home":{"street":"s","city":"c"},"when":"2025-01-01T00:00:00Z","NoTag":false}`,
		`{"id":"1","name":"n","level":"none","home":{"street":"s"},"when":3,"NoTag":"no","tags":["blue"],"pair":[1],"priority":4}`,
		`{"id":"1","name":"n","level":"low","home":{"street":"s","city":"c"},"when":"2025-01-01T00:00:00Z","NoTag":false,"others":[{"street":1}],"scores":{"a":"b"},"count":70000}`,
	} {
		t.Run("snapshot "+args, func(t *testing.T) {
			checkAgreement(t, snap, snap.Definition(), args)
		})
	}
}

// FuzzDecoderAgreesWithSchema looks for arguments on which the decoder and
// the published schema disagree (run with go test -fuzz).
func FuzzDecoderAgreesWithSchema(f *testing.F) {
	for _, s := range agreementSeeds {
		f.Add(s)
	}
	h := agentresolver.Func("t", "A tool for tests.", noop[decodeArgs])
	tool := h.Definition()
	f.Fuzz(func(t *testing.T, args string) {
		checkAgreement(t, h, tool, args)
	})
}
