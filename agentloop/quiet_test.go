package agentloop_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// TestQuietByDefault: a run that ends well writes nothing at Info level;
// one that fails writes a warning with its error.
func TestQuietByDefault(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ok := func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
		return agentloop.Response{Content: "done"}, nil
	}
	_, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("hi")}, ok, agentloop.Options{Logger: logger})
	require.NoError(t, err)
	assert.Empty(t, logs.String(), "nothing at Info for a run that ended well")

	failing := func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
		return agentloop.Response{}, errors.New("model unreachable")
	}
	_, _, err = agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("hi")}, failing, agentloop.Options{Logger: logger})
	require.Error(t, err)
	assert.Contains(t, logs.String(), "level=WARN")
	assert.Contains(t, logs.String(), "model unreachable")
}
