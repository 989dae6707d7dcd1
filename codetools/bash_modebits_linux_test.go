//go:build linux

package codetools

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/llmtoolkit/llmtoolkit"
)

// Issue 47, row 1, through the bash tool, one-shot and as a background
// job, and through exec_command on a terminal: `cp /bin/bash ./rootsh && chmod 6755 ./rootsh` leaves no setuid or
// setgid bit on the host's disk (internal/sandbox's
// TestSandboxModeBitsEverySyscall tries every system call).
func TestBashSandboxLeavesNoSetuidFile(t *testing.T) {
	for _, backend := range sandboxBackends(t) {
		t.Run(backend, func(t *testing.T) {
			root := t.TempDir()
			ct, err := New(root, WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: backend}), WithSandboxRequired(), WithBackgroundJobs(), WithTerminals())
			require.NoError(t, err)
			t.Cleanup(func() { ct.Close() })
			out := execute(ct, "bash", map[string]any{"command": "cp /bin/bash ./rootsh && chmod 6755 ./rootsh; mkdir d; chmod 2755 d; ls -l"})
			started := execute(ct, "bash", map[string]any{"command": "cp /bin/bash ./jobsh && chmod 4755 ./jobsh; echo done", "run_in_background": true})
			require.NoError(t, started.Err, started.Content)
			end := execute(ct, "job_output", map[string]any{"job_id": jobID(t, started.Content), "wait_seconds": 30, "until_exit": true})
			require.NoError(t, end.Err, end.Content)
			term := execute(ct, "exec_command", map[string]any{"cmd": "cp /bin/bash ./ttysh && chmod 2755 ./ttysh; echo done", "tty": true, "yield_time_ms": 20000})
			require.NoError(t, term.Err, term.Content)
			require.Contains(t, term.Content, "done")
			for _, f := range []string{"rootsh", "d", "jobsh", "ttysh"} {
				var st unix.Stat_t
				require.NoError(t, unix.Lstat(filepath.Join(root, f), &st), "%s was not made: %s", f, out.Content)
				assert.Zero(t, st.Mode&(unix.S_ISUID|unix.S_ISGID), "%s keeps mode %o on the host's disk: %s %s", f, st.Mode, out.Content, end.Content)
			}
			bash, ok := llmtoolkit.FindTool(ct, "bash")
			require.True(t, ok)
			assert.Contains(t, bash.Description, "setuid", "the model is told")
		})
	}
}
