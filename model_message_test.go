package llmtoolkit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// hostFault is an error with one text for the host and another for the model.
type hostFault struct{ detail string }

func (e *hostFault) Error() string        { return "host: " + e.detail }
func (e *hostFault) ModelMessage() string { return "not available right now" }

func TestModelMessengerIsWhatTheModelReads(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"direct", &hostFault{"set FOO_TOKEN"}},
		{"wrapped", fmt.Errorf("resolving: %w", &hostFault{"set FOO_TOKEN"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := (&llmtoolkittest.Fake{}).Handle("t", func(context.Context, llmtoolkit.Call) (string, error) { return "", tc.err })
			res := llmtoolkit.Execute(t.Context(), fake, llmtoolkit.Call{Name: "t"})
			require.True(t, res.IsError)
			assert.Equal(t, "not available right now", res.Content)
			assert.NotContains(t, res.Content, "FOO_TOKEN")
			var hf *hostFault
			require.True(t, errors.As(res.Err, &hf), "the host keeps the error")
			assert.ErrorContains(t, res.Err, "set FOO_TOKEN")
		})
	}
}
