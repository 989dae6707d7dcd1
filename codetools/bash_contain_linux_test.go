//go:build linux

package codetools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/proc"
	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// procsWith lists the live processes (zombies aside) whose command line
// holds marker, the test's own process aside.
func procsWith(marker string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		if st, ok := proc.ReadStat(pid); ok && st.State != 'Z' && st.State != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// containModes lists the ways bash contains its commands on this machine:
// the PID namespace of every call, and each sandbox backend.
func containModes(t *testing.T) map[string][]Option {
	t.Helper()
	modes := map[string][]Option{}
	if ok, why := sandbox.Contains(); ok {
		modes["namespace"] = nil
	} else {
		t.Logf("no PID namespace for plain calls: %s", why)
	}
	for _, name := range []string{"bubblewrap", "landlock"} {
		if _, err := sandbox.ByName(name); err != nil {
			t.Logf("%s not tested: %v", name, err)
			continue
		}
		modes[name] = []Option{WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: name}), WithSandboxRequired()}
	}
	if len(modes) == 0 {
		t.Skip("the kernel gives this user no PID namespace and no sandbox backend runs: only the scan (tested elsewhere)")
	}
	return modes
}

// The escapes of issue 28: a detached process with a cleared environment,
// a chain that forks and exits every 50 ms, and 200 processes that each
// call setsid. None outlives the call, whether it ended by itself or timed
// out, and a timed-out call returns within about its timeout. Without
// LLMTOOLKIT_STRESS, only the cheap case runs: a detached process, in each
// mode, without a timeout.
func TestBashContainsEveryProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("30 s of real process escapes: -short leaves it out (CI's race pass); the plain run has it")
	}
	for mode, opts := range containModes(t) {
		for _, timeout := range []bool{false, true} {
			for _, attack := range []string{"detached", "hopper", "setsid bomb"} {
				t.Run(fmt.Sprintf("%s/%s/timeout=%v", mode, attack, timeout), func(t *testing.T) {
					if timeout || attack != "detached" {
						requireStress(t)
					}
					ct := newTools(t, opts...)
					marker := fmt.Sprintf("300.%d", time.Now().UnixNano()) // a valid sleep time, unique
					var command string
					switch attack {
					case "detached":
						command = `( setsid env -i sh -c 'exec sleep ` + marker + `' </dev/null >/dev/null 2>&1 & ); sleep 0.05`
					case "hopper": // each generation starts the next in a new session, then exits
						require.NoError(t, os.WriteFile(filepath.Join(ct.Root(), marker+".sh"),
							[]byte("sleep 0.05\nsetsid env -i sh ./"+marker+".sh </dev/null >/dev/null 2>&1 &\n"), 0o755))
						command = `setsid env -i sh ./` + marker + `.sh </dev/null >/dev/null 2>&1 & sleep 0.5`
					case "setsid bomb":
						n := 200 // a timed-out call: as many as start within the timeout
						if !timeout {
							n = 50 // on 2 loaded cores, 200 take ~15 s to start
						}
						command = `for i in $(seq ` + strconv.Itoa(n) + `); do ( setsid env -i sh -c 'while :; do sleep 0.05; done' ` + marker + ` </dev/null >/dev/null 2>&1 & ); done; sleep 0.5`
					}
					args := map[string]any{"command": command}
					if timeout {
						args["command"] = command + "; sleep 60"
						args["timeout"] = 2
					}
					began := time.Now()
					_, err := ct.Resolve(context.Background(), llmtoolkit.Call{Name: "bash", Arguments: args})
					took := time.Since(began)
					t.Cleanup(func() { // never leave them, whatever the test says
						for _, pid := range procsWith(marker) {
							_ = killPid(pid)
						}
					})
					if timeout {
						require.ErrorIs(t, err, ErrCommandFailed)
						assert.Less(t, took, 4*time.Second, "a 2 s timeout")
					} else {
						require.NoError(t, err)
					}
					// Right away, and still a while later (a hopper's next generation).
					assert.Empty(t, procsWith(marker), "processes outlived the call")
					time.Sleep(300 * time.Millisecond)
					assert.Empty(t, procsWith(marker), "processes outlived the call")
				})
			}
		}
	}
}

func killPid(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
