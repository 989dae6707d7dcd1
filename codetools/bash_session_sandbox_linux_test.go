package codetools

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// TestBashSessionStderrApartSandboxed: the persistent shell keeps stderr
// apart under the sandbox too: the shell in a sandbox of its own (the
// host's backend), and in the session's (one sandbox forking every
// command).
func TestBashSessionStderrApartSandboxed(t *testing.T) {
	if _, err := sandbox.NewLandlock(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"own sandbox", []Option{WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite}), WithSandboxRequired()}},
		{"session sandbox", []Option{WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite}), WithSessionSandbox(), WithSandboxRequired()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "session sandbox" && os.Geteuid() != 0 {
				t.Skip("a shared network namespace needs root")
			}
			c, err := New(t.TempDir(), append([]Option{WithBashSession()}, tc.opts...)...)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			ctx := context.Background()
			res := sessionCall(t, c, ctx, map[string]any{"command": "export S=kept; echo out; echo err >&2"})
			require.False(t, res.IsError, res.Content)
			assert.Equal(t, "out\n\nstderr:\nerr", res.Content)
			res = sessionCall(t, c, ctx, map[string]any{"command": "echo \"$S\" >&2; exit 4"})
			assert.True(t, res.IsError)
			assert.Equal(t, "stderr:\nkept\n\nThe command ended the shell (exit code 4); the next command starts a new session", res.Content)
			p := payloadOf[ProcessPayload](t, res, DisplayProcess)
			assert.NotContains(t, p.Sandbox, "none", "it ran sandboxed")
		})
	}
}
