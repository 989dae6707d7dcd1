//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The attacks of issue 35, rows 1 to 7, on every backend this machine
// runs. As root they run as root and again, through
// TestSandboxUnprivileged, as the user nobody.

// policyFor returns a workspace-write policy with fresh folders.
func policyFor(t *testing.T, network bool, readable ...string) Policy {
	return Policy{Mode: WorkspaceWrite, Network: network, Root: t.TempDir(), Tmp: t.TempDir(), Readable: readable}
}

// exitCode returns the exit status in err, 0 without one.
func exitCode(err error) int {
	var ee interface{ ExitCode() int } // *exec.ExitError, or a session's *ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// Rows 1 and 3: the command holds no capability, cannot remount a
// read-only folder writable, and (when the host is root) is not root: it
// cannot read /etc/shadow. It still writes the root, files the host's
// user owns included, and what it writes keeps that owner on disk.
func TestSandboxHoldsNoPrivilege(t *testing.T) {
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			readable := t.TempDir()
			p := policyFor(t, false, readable)
			require.NoError(t, os.WriteFile(filepath.Join(p.Root, "existing.txt"), []byte("a\n"), 0o644))

			out, err := run(t, b, p, "grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status")
			require.NoError(t, err, out)
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				assert.True(t, strings.HasSuffix(line, "0000000000000000"), "a capability is left: %s", line)
			}

			out, _ = run(t, b, p, "mount -o remount,rw,bind "+readable+" && echo x > "+readable+"/f; mount -o remount,rw /usr && echo remounted")
			assert.NoFileExists(t, filepath.Join(readable, "f"), "the remount made a readable folder writable: %s", out)
			assert.NotContains(t, out, "remounted")

			if _, err := os.Stat("/etc/shadow"); err == nil {
				out, err = run(t, b, p, "cat /etc/shadow")
				assert.Error(t, err, "/etc/shadow was read: %.40s", out)
				assert.NotContains(t, out, "root:")
			}
			out, err = run(t, b, p, "id -u")
			require.NoError(t, err, out)
			if os.Geteuid() == 0 {
				assert.NotEqual(t, "0", strings.TrimSpace(out), "the command runs as root")
			}

			out, err = run(t, b, p, `echo b >> existing.txt && echo c > new.txt && mkdir d && echo e > d/f && echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`)
			require.NoError(t, err, out)
			data, err := os.ReadFile(filepath.Join(p.Root, "existing.txt"))
			require.NoError(t, err)
			assert.Equal(t, "a\nb\n", string(data))
			for _, f := range []string{"new.txt", "d/f"} {
				var st unix.Stat_t
				require.NoError(t, unix.Stat(filepath.Join(p.Root, f), &st))
				assert.Equal(t, uint32(os.Geteuid()), st.Uid, "%s is not the host user's on disk", f)
			}
		})
	}
}

// Row 2: chmod, chown and touch on a file outside the writable folders
// (in a readable one) change nothing.
func TestSandboxRefusesMetadataWrites(t *testing.T) {
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			readable := t.TempDir()
			f := filepath.Join(readable, "f")
			require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
			old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
			require.NoError(t, os.Chtimes(f, old, old))
			p := policyFor(t, false, readable)
			out, _ := run(t, b, p, fmt.Sprintf("chmod 777 %[1]s; touch %[1]s; chown %[2]d:%[2]d %[1]s; chown 1:1 %[1]s", f, os.Geteuid()))
			fi, err := os.Stat(f)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "mode changed: %s", out)
			assert.True(t, fi.ModTime().Equal(old), "times changed: %s", out)
			var st unix.Stat_t
			require.NoError(t, unix.Stat(f, &st))
			assert.Equal(t, uint32(os.Geteuid()), st.Uid, "owner changed: %s", out)
		})
	}
}

// noCloexec duplicates fd onto the first free descriptor from target on,
// without close-on-exec, as a descriptor the host inherited from its own
// parent would be, and returns it.
func noCloexec(t *testing.T, fd uintptr, target int) int {
	t.Helper()
	for ; ; target++ {
		if _, err := unix.FcntlInt(uintptr(target), unix.F_GETFD, 0); err != nil {
			break // free
		}
	}
	require.NoError(t, unix.Dup3(int(fd), target, 0))
	t.Cleanup(func() { unix.Close(target) })
	return target
}

// Row 4: descriptors of the host without close-on-exec (a file outside
// every allowed folder on 9, a connected loopback socket on 13) cannot be
// used by the command.
func TestSandboxInheritsNoDescriptor(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(outside, []byte("s3cret"), 0o600))
	f, err := os.Open(outside)
	require.NoError(t, err)
	defer f.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	server, err := ln.Accept()
	require.NoError(t, err)
	defer server.Close()
	raw, err := conn.(*net.TCPConn).File()
	require.NoError(t, err)
	defer raw.Close()
	file := noCloexec(t, f.Fd(), 90)
	sock := noCloexec(t, raw.Fd(), 130)

	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			out, _ := run(t, b, policyFor(t, false), fmt.Sprintf("cat <&%d; echo PING >&%d; ls /proc/self/fd", file, sock))
			assert.NotContains(t, out, "s3cret", "a file was read through an inherited descriptor")
			require.NoError(t, server.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
			n, _ := server.Read(make([]byte, 16))
			assert.Zero(t, n, "the command wrote to an inherited socket: %s", out)
		})
	}
}

// Row 5: the socket filter holds under every backend: no AF_VSOCK (nor
// another family outside Unix, IPv4, IPv6, netlink) with the network
// open, and no IPv4 or IPv6 socket with it closed.
func TestSandboxRefusesSocketFamilies(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl opens the sockets: not installed")
	}
	sock := func(family int) string {
		return fmt.Sprintf(`perl -e 'use Socket; socket(my $s, %d, 1, 0) or die "refused: $!\n"; print "created\n"'`, family)
	}
	for name, b := range backends(t) {
		for _, network := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/network=%v", name, network), func(t *testing.T) {
				p := policyFor(t, network)
				for _, family := range []int{unix.AF_VSOCK, unix.AF_PACKET, unix.AF_BLUETOOTH} {
					out, _ := run(t, b, p, sock(family))
					assert.NotContains(t, out, "created", "family %d", family)
				}
				for _, family := range []int{unix.AF_INET, unix.AF_INET6} {
					out, _ := run(t, b, p, sock(family))
					// bubblewrap's session server has a loopback-only
					// network of its own: the namespace is the boundary
					// (TestPolicies: nothing outside is reached).
					if network || name == "bubblewrap/session" {
						assert.Contains(t, out, "created", "family %d", family)
					} else {
						assert.NotContains(t, out, "created", "family %d", family)
					}
				}
				out, _ := run(t, b, p, sock(unix.AF_UNIX))
				if strings.HasPrefix(name, "bubblewrap") || network {
					assert.Contains(t, out, "created", "Unix sockets")
				}
			})
		}
	}
}

// Row 6: the shell is not the init of its namespace: a signal it sends
// itself ends it with 128+N, a signal to the init reaches it, and orphans
// are reaped.
func TestSandboxInitForwardsSignals(t *testing.T) {
	all := backends(t)
	all["namespace"] = Contain()
	for name, b := range all {
		t.Run(name, func(t *testing.T) {
			p := policyFor(t, false)
			if name == "namespace" {
				p = Policy{Root: p.Root}
			}
			for _, tc := range []struct {
				script string
				code   int
			}{
				{"false || kill -9 $$; echo after", 137},
				{"kill $$; echo after", 143},
				{"kill -TERM $$; echo after", 143},
				{"kill -INT $$; echo after", 130},
				{"kill -TERM 1; sleep 5; echo after", 143},
				{"exit 3", 3},
			} {
				began := time.Now()
				out, err := run(t, b, p, tc.script)
				assert.Equal(t, tc.code, exitCode(err), "%s: %s", tc.script, out)
				assert.NotContains(t, out, "after", tc.script)
				assert.Less(t, time.Since(began), 4*time.Second, tc.script)
			}
			if name == "namespace" {
				return // the host's /proc: its zombies are not the namespace's
			}
			// The zombies of /proc (in a session, the session's: ps, which
			// looks itself up there by its own pid, may not find itself).
			out, err := run(t, b, p, "for i in 1 2 3; do sh -c 'sleep 0.05 & exit 0'; done; sleep 0.5; cat /proc/[0-9]*/status | grep -c '^State:.Z' || true")
			require.NoError(t, err, out)
			assert.Equal(t, "0", strings.TrimSpace(out), "zombies left unreaped")
			// The same with a main program that reaps nothing (sleep): the
			// orphans are the init's to reap.
			out, err = run(t, b, p, "(for i in 1 2 3; do sh -c 'sleep 0.05 & exit 0'; done; sleep 0.5; cat /proc/[0-9]*/status | grep -c '^State:.Z') & exec sleep 1")
			require.NoError(t, err, out)
			assert.Equal(t, "0", strings.TrimSpace(out), "zombies left unreaped beside a main program that reaps none")
		})
	}
}

// hostChildEnv makes the test binary, started by TestSandboxDiesWithHost,
// the host: it starts a long command under the backend named by the value
// and waits to be killed.
const hostChildEnv = "LLMTOOLKIT_SANDBOX_TEST_HOST"

// TestSandboxHostChild is the host of TestSandboxDiesWithHost (it does
// nothing in a plain run).
func TestSandboxHostChild(t *testing.T) {
	name := os.Getenv(hostChildEnv)
	if name == "" {
		t.Skip("the host of TestSandboxDiesWithHost")
	}
	switch {
	case os.Getenv(stormEnv) != "":
		stormHost(t, name, os.Getenv(hostChildEnv+"_MARKER"))
		return
	}
	var b Backend = Contain()
	p := Policy{Root: t.TempDir()}
	if name != "namespace" {
		var err error
		b, err = ByName(strings.TrimSuffix(name, "/session"))
		require.NoError(t, err)
		if strings.HasSuffix(name, "/session") {
			b = &sessionBackend{t: t, inner: b, made: map[string]*Session{}}
		}
		p = policyFor(t, false)
	}
	c, err := b.Command(Spec{Path: "/bin/sh", Args: []string{"-c", "sleep " + os.Getenv(hostChildEnv+"_MARKER")}, Dir: p.Root, Env: []string{"PATH=/usr/bin:/bin"}}, p)
	require.NoError(t, err)
	c.Stderr = os.Stderr
	require.NoError(t, c.Start())
	fmt.Println("started")
	time.Sleep(time.Minute)
}

// Row 7: the host is SIGKILLed while a contained command runs: the
// command's processes end with it.
func TestSandboxDiesWithHost(t *testing.T) {
	all := map[string]bool{"namespace": true}
	for name := range backends(t) {
		all[name] = true
	}
	for name := range all {
		t.Run(name, func(t *testing.T) {
			marker := fmt.Sprintf("300.%d", time.Now().UnixNano())
			host := exec.Command(os.Args[0], "-test.run=^TestSandboxHostChild$", "-test.count=1")
			host.Env = append(os.Environ(), hostChildEnv+"="+name, hostChildEnv+"_MARKER="+marker)
			out, err := host.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, host.Start())
			line, _ := bufio.NewReader(out).ReadString('\n')
			require.Equal(t, "started\n", line)
			t.Cleanup(func() { killMarked(marker) })
			for deadline := time.Now().Add(10 * time.Second); len(running(marker)) == 0 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			require.NotEmpty(t, running(marker), "the command did not start")
			require.NoError(t, host.Process.Signal(syscall.SIGKILL))
			_ = host.Wait()
			assert.Empty(t, waitGone(marker, 3*time.Second), "the command outlived its host")
		})
	}
}

// stormEnv makes TestSandboxHostChild a host that starts commands (in
// session mode: sessions, a command in each) without pause, from a few
// goroutines, until it is killed: its root and temporary folder are the
// value, separated by a colon.
const stormEnv = hostChildEnv + "_STORM"

// stormHost is TestSandboxHostChild under stormEnv.
func stormHost(t *testing.T, name, marker string) {
	root, tmp, _ := strings.Cut(os.Getenv(stormEnv), ":")
	b, err := ByName(strings.TrimSuffix(name, "/session"))
	require.NoError(t, err)
	p := Policy{Mode: WorkspaceWrite, Root: root, Tmp: tmp}
	spec := Spec{Path: "/bin/sh", Args: []string{"-c", "sleep " + marker}, Dir: root, Env: []string{"PATH=/usr/bin:/bin"}}
	fmt.Println("started")
	for range 3 {
		go func() {
			for {
				var c *Cmd
				var err error
				if strings.HasSuffix(name, "/session") {
					var s *Session
					if s, err = NewSession(b, p); err == nil {
						c, err = s.Command(spec, p)
					}
				} else {
					c, err = b.Command(spec, p)
				}
				if err == nil {
					err = c.Start()
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, "storm:", err)
				}
			}
		}()
	}
	time.Sleep(time.Minute)
}

// A host SIGKILLed at any moment of its commands' start: nothing it
// started outlives it, in every backend, one-shot or a session's. Each
// round kills a host that starts commands without pause, after a random
// delay; as root and, through TestSandboxUnprivileged, as nobody.
// (bubblewrap's narrowest window, held open: TestBubblewrapDiesWithHostInItsWindow.)
func TestSandboxDiesWithHostWhileStarting(t *testing.T) {
	rounds := 6
	if os.Getenv("LLMTOOLKIT_STRESS") != "" {
		rounds = 60
	}
	for name := range backends(t) {
		t.Run(name, func(t *testing.T) {
			for round := range rounds {
				marker := fmt.Sprintf("300.%d", time.Now().UnixNano())
				root := filepath.Join(t.TempDir(), "root-"+marker)
				require.NoError(t, os.Mkdir(root, 0o755))
				host := exec.Command(os.Args[0], "-test.run=^TestSandboxHostChild$", "-test.count=1")
				host.Env = append(os.Environ(), hostChildEnv+"="+name, hostChildEnv+"_MARKER="+marker, stormEnv+"="+root+":"+t.TempDir())
				out, err := host.StdoutPipe()
				require.NoError(t, err)
				require.NoError(t, host.Start())
				line, _ := bufio.NewReader(out).ReadString('\n')
				require.Equal(t, "started\n", line)
				t.Cleanup(func() { killMarked(marker) })
				time.Sleep(time.Duration(rand.Int64N(int64(150 * time.Millisecond))))
				require.NoError(t, host.Process.Signal(syscall.SIGKILL))
				_ = host.Wait()
				// A helper the host started just before it died is ended
				// by its own check of the host (dieWithParent, through
				// the host's pidfd), once its runtime has started: under
				// -race on a loaded machine that took over 3 s (one
				// thread, no signal handler yet, runnable), so the wait
				// is generous; a helper that never checks stays past it.
				if left := waitGone(marker, hostDeathWait); len(left) > 0 {
					assert.Failf(t, "a process outlived its host", "round %d of %d: %s", round+1, rounds, describe(left))
					killMarked(marker)
				}
			}
		})
	}
}

// hostDeathWait bounds how long a test waits, after it killed a host,
// for the processes the host started to end.
const hostDeathWait = 20 * time.Second

// describe names each process of pids: its state, parent and command line.
func describe(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		state := string(stat)
		if i := strings.LastIndexByte(state, ')'); i > 0 && i+2 < len(state) {
			state = strings.Join(strings.Fields(state[i+2:])[:2], " ppid ")
		}
		args := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if len(args) > 200 {
			args = args[:200] + "..."
		}
		fmt.Fprintf(&b, "\n  pid %d (%s): %s", pid, state, args)
	}
	return b.String()
}

// waitGone waits up to wait for the processes marker marks to end and
// returns those still alive. It stops early only on two clean scans in a
// row, neither seeing a process in the middle of an exec: a child of a
// dead host, exec'ing the marked helper, has between its new memory and
// its new arguments neither a command line nor an environment (the exec
// window, CI under load), and a scan lists /proc before it reads each
// entry.
func waitGone(marker string, wait time.Duration) []int {
	deadline := time.Now().Add(wait)
	for clean := 0; clean < 2 && time.Now().Before(deadline); {
		if left, execing := scan(marker, true); len(left) == 0 && !execing {
			clean++
			time.Sleep(10 * time.Millisecond)
			continue
		}
		clean = 0
		time.Sleep(50 * time.Millisecond)
	}
	return marked(marker)
}

// marked lists the live processes whose command line or environment
// holds marker. The environment matters: a child a host forked but had
// not yet exec'd when it died still carries the host's command line
// (no marker) and the host's environment (the marker), and execs the
// marked helper a moment later; a scan of command lines alone missed it
// and let the test stop waiting too soon (CI, stop 62).
func marked(marker string) []int {
	pids, _ := scan(marker, true)
	return pids
}

// running lists the live processes whose command line holds marker: the
// marked command itself, never a host whose environment holds it.
func running(marker string) []int {
	pids, _ := scan(marker, false)
	return pids
}

// scan reads /proc once: the live processes whose command line, or with
// environ also whose environment, holds marker; and whether a live user
// process (no zombie, no kernel thread) has an empty command line, one
// between the two halves of an exec (or of its exit), whose marker no
// scan can see yet.
func scan(marker string, environ bool) (pids []int, execing bool) {
	const pfKthread = 0x00200000
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		hit := strings.Contains(string(cmdline), marker)
		if !hit && environ && len(cmdline) > 0 {
			env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
			hit = strings.Contains(string(env), marker)
		}
		if !hit && len(cmdline) > 0 {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 7 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		if hit {
			pids = append(pids, pid)
		} else if flags, err := strconv.ParseUint(fields[6], 10, 64); err == nil && flags&pfKthread == 0 {
			execing = true
		}
	}
	return pids, execing
}

func killMarked(marker string) {
	for _, pid := range marked(marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// unprivilegedEnv marks the run of TestSandboxUnprivileged's child.
const unprivilegedEnv = "LLMTOOLKIT_SANDBOX_TEST_UNPRIVILEGED"

// The rows as an unprivileged user: the test binary again, as nobody.
func TestSandboxUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("already unprivileged: the other tests are this one")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	dir, err := os.MkdirTemp("", "llmtoolkit-unprivileged-*")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "sandbox.test")
	src, err := os.Open(os.Args[0])
	require.NoError(t, err)
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	src.Close()
	require.NoError(t, dst.Close())
	require.NoError(t, err)
	cmd := exec.Command(setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups", "--",
		bin, "-test.run=^Test(BubblewrapDiesWithHostInItsWindow|Sandbox(HoldsNoPrivilege|RefusesMetadataWrites|InheritsNoDescriptor|RefusesSocketFamilies|InitForwardsSignals|DiesWithHost|DiesWithHostWhileStarting|RefusesSetuidFiles|ModeBitsEverySyscall|SetgidFolders|OwnIPCAndUTS))$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=/tmp", unprivilegedEnv + "=1"}
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	require.NoError(t, err)
	assert.NotContains(t, string(out), "--- SKIP: TestSandboxHoldsNoPrivilege", "no backend ran as nobody")
}
