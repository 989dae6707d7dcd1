//go:build linux

package codetools

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// sandboxBackends lists the backends this machine runs, logging why the
// others are not tested.
func sandboxBackends(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, name := range []string{"bubblewrap", "landlock"} {
		if _, err := sandbox.ByName(name); err != nil {
			t.Logf("%s not tested: %v", name, err)
			continue
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		t.Skip("no sandbox backend runs on this machine (see the log)")
	}
	return out
}

// bashDisplay runs command and returns the answer, the "process" Display
// and the error.
func bashDisplay(t *testing.T, ct *CodeTools, command string) (string, ProcessPayload, error) {
	t.Helper()
	res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": command}})
	var shown ProcessPayload
	if res.Display != nil {
		shown, _ = res.Display.Payload.(ProcessPayload)
	}
	return res.Content, shown, res.Err
}

// Through the bash tool: each policy on each backend, what the issue lists.
func TestBashSandboxPolicies(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s3cret"), 0o600))
	t.Setenv("AWS_SECRET_ACCESS_KEY", "host-secret")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() }) // after the parallel cases, not when this function returns
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	home, _ := os.UserHomeDir()

	for _, backend := range sandboxBackends(t) {
		for _, mode := range []SandboxMode{SandboxWorkspaceWrite, SandboxReadOnly} {
			for _, network := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/network=%v", backend, mode, network), func(t *testing.T) {
					// each case its own root and target names: they run at
					// once (36 s one after the other under -race)
					t.Parallel()
					ct := newTools(t, WithSandbox(SandboxPolicy{Mode: mode, Network: network, Backend: backend}), WithSandboxRequired())
					require.NoError(t, os.Symlink(outside, filepath.Join(ct.Root(), "link")))

					out, shown, err := bashDisplay(t, ct, "echo hi")
					require.NoError(t, err)
					assert.Equal(t, "hi", out)
					assert.Contains(t, shown.Sandbox, backend)
					assert.Contains(t, shown.Sandbox, mode.String())

					out, _, _ = bashDisplay(t, ct, "cat "+filepath.Join(outside, "secret.txt")+"; cat link/secret.txt")
					assert.NotContains(t, out, "s3cret", "read outside the root")

					out, _, _ = bashDisplay(t, ct, "echo ${AWS_SECRET_ACCESS_KEY:-absent}; env")
					assert.NotContains(t, out, "host-secret")

					_, _, err = bashDisplay(t, ct, "echo x > inside.txt")
					if mode == SandboxWorkspaceWrite {
						assert.NoError(t, err)
						assert.FileExists(t, filepath.Join(ct.Root(), "inside.txt"))
					} else {
						assert.Error(t, err)
						assert.NoFileExists(t, filepath.Join(ct.Root(), "inside.txt"))
					}
					out, _, err = bashDisplay(t, ct, `echo x > "$TMPDIR/t" && cat "$TMPDIR/t"`)
					assert.NoError(t, err, out)

					name := "sbx-" + strings.ReplaceAll(t.Name(), "/", "-")
					targets := []string{filepath.Join(os.TempDir(), name), filepath.Join(outside, name)}
					if home != "" {
						targets = append(targets, filepath.Join(home, name))
					}
					for _, target := range targets {
						_, _, _ = bashDisplay(t, ct, "echo pwned > "+target)
						assert.NoFileExists(t, target, "written outside the root")
						_ = os.Remove(target)
					}
					_, _, _ = bashDisplay(t, ct, "echo pwned > link/"+name)
					assert.NoFileExists(t, filepath.Join(outside, name), "written through a link")

					out, _, err = bashDisplay(t, ct, fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port))
					if network {
						assert.NoError(t, err, out)
					} else {
						assert.Error(t, err)
						assert.NotContains(t, out, "connected")
					}

					if mode == SandboxReadOnly {
						_, ok := ct.LookupTool("write_file")
						assert.False(t, ok, "a read-only sandbox offers no tool that writes")
					}
				})
			}
		}
	}
}

// A sandbox asked for with WithSandboxRequired that cannot run is an error of
// New, never a silent unsandboxed run; without WithSandboxRequired bash says in
// its Display and description that it runs unsandboxed.
func TestBashSandboxUnavailable(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no bwrap to be found
	_, err := New(t.TempDir(), WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "bubblewrap"}), WithSandboxRequired())
	require.ErrorIs(t, err, ErrSandboxUnavailable)
	assert.Contains(t, err.Error(), "bubblewrap")

	_, err = New(t.TempDir(), WithSandboxRequired())
	require.ErrorIs(t, err, ErrSandboxUnavailable)

	_, err = New(t.TempDir(), WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "chroot"}))
	require.Error(t, err, "an unknown backend is a mistake, not a fallback")

	ct := newTools(t, WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "bubblewrap"}), WithBashShell("/bin/sh"))
	_, shown, _ := bashDisplay(t, ct, "true")
	assert.Contains(t, shown.Sandbox, "none: ")
}

// A spill folder inside the root that a command replaces by a link to
// another folder: no spill file is made or removed there.
func TestBashSpillFolderReplacedByLink(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	root := t.TempDir()
	spill := filepath.Join(root, "spill")
	ct, err := New(root, WithBashSpillDir(spill))
	require.NoError(t, err)
	defer ct.Close()
	big := "seq 1 100000"
	_, err = run(t, ct, "bash", map[string]any{"command": big})
	require.NoError(t, err)
	_, err = run(t, ct, "bash", map[string]any{"command": "rm -rf spill && ln -s " + outside + " spill"})
	require.NoError(t, err)
	out, _ := run(t, ct, "bash", map[string]any{"command": big})
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "a spill file was made through the link; the answer: %.200s", out)
}

// TestCommandsDeclareTheirSandbox: every tool that runs commands declares
// what its sandbox lets them write and read (Commands.Sandbox): the root
// under workspace-write, nothing under read-only, and nil without a
// sandbox, for each backend.
func TestCommandsDeclareTheirSandbox(t *testing.T) {
	extra := t.TempDir()
	for _, backend := range append(sandboxBackends(t), "none") {
		for _, mode := range []SandboxMode{SandboxWorkspaceWrite, SandboxReadOnly} {
			t.Run(backend+"/"+mode.String(), func(t *testing.T) {
				root := t.TempDir()
				opts := []Option{WithBackgroundJobs(), WithTerminals(), WithShell()}
				if backend != "none" {
					opts = append(opts, WithSandbox(SandboxPolicy{Mode: mode, Backend: backend, Readable: []string{extra}}), WithSandboxRequired())
				}
				c, err := New(root, opts...)
				require.NoError(t, err)
				defer c.Close()
				var n int
				for _, tool := range c.Tools() {
					if tool.Commands == nil {
						continue
					}
					n++
					sb := tool.Commands.Sandbox
					if backend == "none" {
						assert.Nil(t, sb, tool.Name)
						continue
					}
					require.NotNil(t, sb, tool.Name)
					want := []string{}
					if mode == SandboxWorkspaceWrite {
						want = []string{c.Root()}
					}
					assert.Equal(t, want, sb.Writable, tool.Name)
					assert.Equal(t, []string{c.Root(), extra}, sb.Readable, tool.Name)
				}
				assert.Equal(t, 4, n, "bash, shell, exec_command, write_stdin")
			})
		}
	}
}
