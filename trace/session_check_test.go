package trace_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestSessionErrNamesBadIDs: a session map the Recorder cannot attribute
// calls with is an error to the host when the session is prepared
// (Session.Err), and the model, if the host goes on, reads a neutral answer.
func TestSessionErrNamesBadIDs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   []string // in Err; none: Err is nil
	}{
		{"not UUIDs", map[string]any{"tenant_id": "t1", "conversation_id": "c1"}, []string{"tenant_id", "conversation_id", "UUID"}},
		{"tenant only", map[string]any{"tenant_id": "t1"}, []string{"tenant_id", "conversation_id is required"}},
		{"wrong type", map[string]any{"tenant_id": tenant, "conversation_id": 42}, []string{"conversation_id must be a UUID string"}},
		{"bad iteration", map[string]any{"tenant_id": tenant, "conversation_id": convA, "iteration": -1}, []string{"iteration"}},
		{"UUIDs", map[string]any{"tenant_id": tenant, "conversation_id": uuid.New()}, nil},
		{"no IDs: bound at call time", map[string]any{"user": "ada"}, nil},
		{"nil map", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newSecretive()
			rec := trace.Record(fake, openSQLite(t), trace.WithLogger(discardLogger()))
			_, s := llmtoolkit.PrepareSession(rec, []string{"read_file", "fail"}, tc.values)
			if tc.want == nil {
				assert.NoError(t, s.Err())
				return
			}
			require.Error(t, s.Err())
			assert.ErrorIs(t, s.Err(), trace.ErrUnattributed)
			for _, w := range tc.want {
				assert.ErrorContains(t, s.Err(), w)
			}
			assert.Equal(t, 1, countLines(s.Err().Error()), "one error for two tools the same Recorder observes")

			res := llmtoolkit.Execute(t.Context(), s, llmtoolkit.Call{Name: "read_file"})
			require.True(t, res.IsError)
			assert.ErrorIs(t, res.Err, trace.ErrUnattributed)
			assert.Contains(t, res.Content, `"read_file" was not run`)
			assert.NotContains(t, res.Content, "tenant_id", "the model is not shown the host's configuration")
			assert.Empty(t, fake.Calls())
		})
	}
}

func countLines(s string) int {
	n := 1
	for _, r := range s {
		if r == '\n' {
			n++
		}
	}
	return n
}
