//go:build linux

package codetools

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 35, row 8: each call gets its own TMPDIR, removed after it; what a
// call leaves there, and its spill file, are out of the next call's reach.
func TestBashTmpdirPerCall(t *testing.T) {
	for _, backend := range sandboxBackends(t) {
		t.Run(backend, func(t *testing.T) {
			ct := newTools(t, WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: backend}), WithSandboxRequired())
			first := execute(ct, "bash", map[string]any{"command": `echo s3cret > "$TMPDIR/left"; echo "$TMPDIR"; seq 1 100000`})
			require.NoError(t, first.Err)
			shown, ok := first.Display.Payload.(ProcessPayload)
			require.True(t, ok)
			require.NotEmpty(t, shown.OutputFile, "the output spilled")
			tmp := strings.SplitN(strings.TrimSpace(shown.Output), "\n", 2)[0]
			if !strings.HasPrefix(tmp, "/") { // the tail only: the first line is in the spill file
				data, err := os.ReadFile(shown.OutputFile)
				require.NoError(t, err)
				tmp = strings.SplitN(string(data), "\n", 2)[0]
			}
			assert.NoDirExists(t, tmp, "the call's TMPDIR outlived it")

			out, _, _ := bashDisplay(t, ct, fmt.Sprintf(`echo "tmp=$TMPDIR"; cat "$TMPDIR/left" %s/left; ls -a "$TMPDIR" "$(dirname "$TMPDIR")"; tail -1 %s`, tmp, shown.OutputFile))
			assert.NotContains(t, out, "s3cret", "a file of the previous call was read")
			assert.NotContains(t, out, "tmp="+tmp+"\n", "the same TMPDIR twice")
			assert.NotContains(t, out, "100000", "the previous call's spill file was read")
		})
	}
}

// Issue 35, row 9: the sandbox's network switch governs http_get too.
func TestHTTPGetFollowsSandboxNetwork(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "fetched") }))
	defer srv.Close()
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprintf("network=%v", network), func(t *testing.T) {
			// Without WithSandboxRequired: the switch holds even where no
			// backend runs.
			ct := newTools(t, WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Network: network}), WithAllowPrivateNetworks())
			out, err := run(t, ct, "http_get", map[string]any{"url": srv.URL, "format": "raw"})
			if network {
				require.NoError(t, err)
				assert.Contains(t, out, "fetched")
				return
			}
			require.ErrorIs(t, err, ErrNetworkClosed)
			assert.Contains(t, err.Error(), "SandboxPolicy.Network")
			assert.NotContains(t, out, "fetched")
			tool, ok := ct.LookupTool("http_get")
			require.True(t, ok)
			assert.Contains(t, tool.Description, "network is closed")
		})
	}
}

// Issue 35, row 6 through the tool: a command that kills its own shell
// stops there, with the exit code of the signal, in every mode, one-shot
// and in the background, per call and in a session's sandbox (where the
// command is not its namespace's init either: a reaper is).
func TestBashShellSignalEndsScript(t *testing.T) {
	modes := map[string][]Option{"contained": {WithBackgroundJobs()}}
	for _, backend := range sandboxBackends(t) {
		modes[backend] = []Option{WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: backend}), WithSandboxRequired(), WithBackgroundJobs()}
		modes[backend+"/session"] = append(slices.Clone(modes[backend]), WithSessionSandbox())
	}
	scripts := map[string]int{"false || kill -9 $$; touch after": 137, "kill -TERM $$; touch after": 143, "kill $$; touch after": 143}
	for name, opts := range modes {
		t.Run(name, func(t *testing.T) {
			ct := newTools(t, opts...)
			for script, code := range scripts {
				_, shown, err := bashDisplay(t, ct, script)
				require.ErrorIs(t, err, ErrCommandFailed, script)
				assert.Equal(t, code, shown.ExitCode, script)
				assert.NoFileExists(t, ct.Root()+"/after", script)
			}
			for script, code := range scripts {
				started := mustRun(t, ct, "bash", map[string]any{"command": script, "run_in_background": true})
				end := mustRun(t, ct, "job_output", map[string]any{"job_id": jobID(t, started), "wait_seconds": 20, "until_exit": true})
				assert.Contains(t, end, fmt.Sprintf("exited with code %d", code), "in the background: %s", script)
				assert.NoFileExists(t, ct.Root()+"/after", script)
			}
			if name != "contained" {
				_, shown, err := bashDisplay(t, ct, "true")
				require.NoError(t, err)
				assert.Contains(t, shown.Sandbox, "no network")
				if os.Geteuid() == 0 {
					assert.Contains(t, shown.Sandbox, "as nobody")
				}
			}
		})
	}
}
