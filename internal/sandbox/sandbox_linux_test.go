//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backends returns every backend this machine runs, skipping the test for
// the others with the reason.
func backends(t *testing.T) map[string]Backend {
	t.Helper()
	out := map[string]Backend{}
	if b, err := NewBubblewrap(); err == nil {
		out["bubblewrap"] = b
		out["bubblewrap/session"] = &sessionBackend{t: t, inner: b, made: map[string]*Session{}}
	} else {
		t.Logf("bubblewrap not tested: %v", err)
	}
	if b, err := NewLandlock(); err == nil {
		out["landlock"] = b
		// The session mode: every test of a backend also runs through a
		// Session's server (session_linux_test.go).
		out["landlock/session"] = &sessionBackend{t: t, inner: b, made: map[string]*Session{}}
	} else {
		t.Logf("landlock not tested: %v", err)
	}
	if len(out) == 0 {
		t.Skip("no sandbox backend runs on this machine (see the log)")
	}
	return out
}

// run runs script with bash under b and p and returns its output and error.
func run(t *testing.T, b Backend, p Policy, script string) (string, error) {
	t.Helper()
	shell, err := exec.LookPath("bash")
	require.NoError(t, err)
	c, err := b.Command(Spec{Path: shell, Args: []string{"-c", script}, Dir: p.Root,
		Env: []string{"PATH=/usr/bin:/bin", "TMPDIR=" + p.Tmp}}, p)
	require.NoError(t, err)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	require.NoError(t, c.Start())
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = c.Kill()
		<-done
		t.Fatalf("the command did not end: %s", out.String())
	}
	return out.String(), err
}

func TestPolicies(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o600))
	home, _ := os.UserHomeDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
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

	for name, b := range backends(t) {
		for _, mode := range []Mode{WorkspaceWrite, ReadOnly} {
			for _, network := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/network=%v", name, mode, network), func(t *testing.T) {
					root, tmp := t.TempDir(), t.TempDir()
					require.NoError(t, os.Symlink(outside, filepath.Join(root, "out")))
					p := Policy{Mode: mode, Network: network, Root: root, Tmp: tmp}
					probe := "p" + strings.ReplaceAll(t.Name(), "/", "_")

					out, err := run(t, b, p, "cat "+secret)
					assert.Error(t, err, "read outside the root: %s", out)
					assert.NotContains(t, out, "s3cret")

					out, err = run(t, b, p, "cat out/secret.txt")
					assert.Error(t, err, "read through a link: %s", out)
					assert.NotContains(t, out, "s3cret")

					out, err = run(t, b, p, "echo hi > inside.txt")
					if mode == WorkspaceWrite {
						assert.NoError(t, err, out)
						assert.FileExists(t, filepath.Join(root, "inside.txt"))
					} else {
						assert.Error(t, err, out)
						assert.NoFileExists(t, filepath.Join(root, "inside.txt"))
					}

					out, err = run(t, b, p, `echo hi > "$TMPDIR/t.txt" && cat "$TMPDIR/t.txt"`)
					assert.NoError(t, err, out)

					targets := []string{
						filepath.Join(os.TempDir(), probe),
						filepath.Join(outside, probe),
						filepath.Join(root, "out", probe+"-link"),
					}
					if home != "" {
						targets = append(targets, filepath.Join(home, probe))
					}
					for _, target := range targets {
						out, err = run(t, b, p, "echo pwned > "+target)
						assert.Error(t, err, "write %s: %s", target, out)
						_ = os.Remove(target) // for the assertions of the next run
					}
					assert.NoFileExists(t, filepath.Join(outside, probe+"-link"))

					out, err = run(t, b, p, fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port))
					if network {
						assert.NoError(t, err, out)
						assert.Contains(t, out, "connected")
					} else {
						assert.Error(t, err, out)
						assert.NotContains(t, out, "connected")
					}
					if !network {
						udp, err := net.ListenPacket("udp", "127.0.0.1:0")
						require.NoError(t, err)
						defer udp.Close()
						out, _ = run(t, b, p, fmt.Sprintf("echo leak > /dev/udp/127.0.0.1/%d", udp.LocalAddr().(*net.UDPAddr).Port))
						require.NoError(t, udp.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
						n, _, _ := udp.ReadFrom(make([]byte, 16))
						assert.Zero(t, n, "a UDP datagram left the sandbox: %s", out)
					}
				})
			}
		}
	}
}

// Killing a contained command ends every process it started, detached or
// not, and Wait returns only once they are gone.
func TestContainment(t *testing.T) {
	all := backends(t)
	all["namespace"] = Contain()
	for name, b := range all {
		for _, kill := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/kill=%v", name, kill), func(t *testing.T) {
				root, tmp := t.TempDir(), t.TempDir()
				mode := WorkspaceWrite
				if name == "namespace" {
					mode = Off
				}
				p := Policy{Mode: mode, Root: root, Tmp: tmp}
				marker := "llmtoolkit-contain-" + filepath.Base(tmp)
				script := "( setsid env -i sh -c 'exec sleep 300 " + marker + "' </dev/null >/dev/null 2>&1 & ); sleep 0.2"
				if kill {
					script += "; sleep 300"
				}
				shell, _ := exec.LookPath("bash")
				c, err := b.Command(Spec{Path: shell, Args: []string{"-c", script}, Dir: root, Env: []string{"PATH=/usr/bin:/bin"}}, p)
				require.NoError(t, err)
				require.NoError(t, c.Start())
				if !c.Contained {
					_ = c.Kill()
					_ = c.Wait()
					t.Skipf("not contained here: %s", c.Fallback)
				}
				if kill {
					time.Sleep(500 * time.Millisecond)
					require.NoError(t, c.Kill())
				}
				_ = c.Wait()
				left, _ := exec.Command("pgrep", "-f", marker).Output()
				assert.Empty(t, strings.TrimSpace(string(left)), "processes outlived the command")
			})
		}
	}
}
