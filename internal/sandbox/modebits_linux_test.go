//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Issue 47, row 1: a sandboxed command never leaves a setuid or setgid
// file, nor a setgid folder, in a folder it may write. As root the
// idmapped root shows the host's files as nobody's, so nobody may set the
// bits, and the disk keeps root's setuid file.

// specialBits returns the setuid and setgid bits of path as the host's
// disk holds them (lstat), and whether it exists.
func specialBits(t *testing.T, path string) (uint32, bool) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return 0, false
	}
	return st.Mode & (unix.S_ISUID | unix.S_ISGID), true
}

// The row as reported, and its folder and copy variants.
func TestSandboxRefusesSetuidFiles(t *testing.T) {
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			p := policyFor(t, false)
			out, _ := run(t, b, p, `cp /bin/bash ./rootsh; chmod 6755 ./rootsh; chmod u+s ./rootsh; chmod g+s ./rootsh;
				mkdir d; chmod 2755 d; mkdir -m 2755 e; install -m 4755 /bin/true ./inst; cp -p /bin/true ./cpp;
				cp /bin/bash "$TMPDIR/t"; chmod 4755 "$TMPDIR/t"; ls -l . "$TMPDIR"`)
			for _, f := range []string{"rootsh", "d", "e", "inst", "cpp"} {
				bits, ok := specialBits(t, filepath.Join(p.Root, f))
				assert.True(t, ok, "%s was not made: %s", f, out)
				assert.Zero(t, bits, "%s keeps mode bits %o on the host's disk: %s", f, bits, out)
			}
			bits, _ := specialBits(t, filepath.Join(p.Tmp, "t"))
			assert.Zero(t, bits, "the temporary folder keeps a setuid file: %s", out)
			// What carries no special bit still works.
			out, err := run(t, b, p, "chmod 0750 rootsh && stat -c %a rootsh")
			require.NoError(t, err, out)
			assert.Equal(t, "750", strings.TrimSpace(out))
		})
	}
}

// modeProbeEnv makes the test binary, run inside the sandbox by
// TestSandboxModeBitsEverySyscall, the probe: TestSandboxModeProbe tries
// every way to set a mode bit in its working folder and prints one line a
// try, "name path result".
const modeProbeEnv = "LLMTOOLKIT_SANDBOX_TEST_MODE_PROBE"

// modeTry is one way to give path mode m; it returns the system call's
// error.
type modeTry struct {
	name string
	dir  bool // it makes or changes a folder
	try  func(path string, m uint32) error
}

// modeTries lists every system call that can set a mode bit: those of
// this architecture's legacy calls (legacyModeTries) and the others.
func modeTries() []modeTry {
	file := func(path string) error { return os.WriteFile(path, []byte("#!/bin/sh\n"), 0o644) }
	tries := []modeTry{
		{"fchmod", false, func(path string, m uint32) error {
			if err := file(path); err != nil {
				return err
			}
			fd, err := unix.Open(path, unix.O_RDONLY, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			return unix.Fchmod(fd, m)
		}},
		{"fchmodat", false, func(path string, m uint32) error {
			if err := file(path); err != nil {
				return err
			}
			return unix.Fchmodat(unix.AT_FDCWD, path, m, 0)
		}},
		{"fchmodat-folder", true, func(path string, m uint32) error {
			if err := os.Mkdir(path, 0o755); err != nil {
				return err
			}
			return unix.Fchmodat(unix.AT_FDCWD, path, m, 0)
		}},
		{"fchmodat2", false, func(path string, m uint32) error {
			if err := file(path); err != nil {
				return err
			}
			p, _ := unix.BytePtrFromString(path)
			_, _, errno := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(fdcwd), uintptr(unsafe.Pointer(p)), uintptr(m), 0, 0, 0)
			return errnoErr(errno)
		}},
		{"openat-creat", false, func(path string, m uint32) error {
			fd, err := unix.Openat(unix.AT_FDCWD, path, unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, m)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"openat-tmpfile", false, func(path string, m uint32) error {
			fd, err := unix.Openat(unix.AT_FDCWD, ".", unix.O_TMPFILE|unix.O_WRONLY, m)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			return unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
		}},
		{"openat2-creat", false, func(path string, m uint32) error {
			fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_EXCL, Mode: uint64(m)})
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"openat-read", false, func(path string, m uint32) error { // the mode is not used: let through
			if err := file(path); err != nil {
				return err
			}
			fd, err := unix.Openat(unix.AT_FDCWD, path, unix.O_RDONLY, m)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"mkdirat", true, func(path string, m uint32) error {
			if err := unix.Mkdirat(unix.AT_FDCWD, path, m); err != nil {
				return err
			}
			return nil
		}},
		{"mknodat", false, func(path string, m uint32) error {
			return unix.Mknodat(unix.AT_FDCWD, path, unix.S_IFREG|m, 0)
		}},
		{"io_uring_setup", false, func(path string, m uint32) error {
			var params [120]byte // struct io_uring_params
			fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
			if errno == 0 {
				unix.Close(int(fd))
				return file(path) // a ring would reach openat and fchmodat unfiltered: mark it
			}
			return errno
		}},
	}
	return append(tries, legacyModeTries()...)
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// TestSandboxModeProbe is the probe of TestSandboxModeBitsEverySyscall (it
// does nothing in a plain run).
func TestSandboxModeProbe(t *testing.T) {
	if os.Getenv(modeProbeEnv) != "1" {
		t.Skip("the probe of TestSandboxModeBitsEverySyscall")
	}
	unix.Umask(0)
	for _, tr := range modeTries() {
		for _, m := range []uint32{0o4755, 0o2755, 0o6755, 0o755} {
			path := fmt.Sprintf("%s-%o", tr.name, m)
			res := "ok"
			if err := tr.try(path, m); err != nil {
				res = err.Error()
			}
			fmt.Printf("probe %s %s %s\n", tr.name, path, strings.ReplaceAll(res, " ", "_"))
		}
	}
}

// Every system call that can set a mode bit, tried inside the sandbox with
// 04755, 02755 and 06755 by the probe: each is refused, or the bits are
// not on the host's disk (lstat). 0755 still works where the call exists.
func TestSandboxModeBitsEverySyscall(t *testing.T) {
	bin, dir := probeBinary(t)
	tries := modeTries()
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			p := policyFor(t, false, dir)
			out, err := run(t, b, p, fmt.Sprintf("%s=1 %s -test.run='^TestSandboxModeProbe$' -test.count=1 -test.v", modeProbeEnv, bin))
			require.NoError(t, err, out)
			seen := 0
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) != 4 || f[0] != "probe" {
					continue
				}
				seen++
				tryName, path, res := f[1], f[2], f[3]
				bits, made := specialBits(t, filepath.Join(p.Root, path))
				if strings.HasSuffix(path, "-755") {
					if res != "ok" && tryName != "io_uring_setup" && tryName != "openat2-creat" && res != "function_not_implemented" {
						t.Errorf("%s without a special bit was refused: %s", path, res)
					}
					continue
				}
				assert.Zero(t, bits, "%s: %s left mode bits %o on disk (result %s)", name, path, bits, res)
				if tryName == "openat-read" {
					assert.Equal(t, "ok", res, "an open that creates nothing was refused for its mode")
				}
				if tryName == "io_uring_setup" {
					assert.False(t, made, "io_uring is open to the command")
				}
			}
			assert.Equal(t, 4*len(tries), seen, "the probe did not report every try: %s", out)
		})
	}
}

// probeBinary copies the test binary to a folder every user may read and
// returns its path and folder.
func probeBinary(t *testing.T) (string, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "llmtoolkit-probe-*")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	data, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	bin := filepath.Join(dir, "probe.test")
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	return bin, dir
}

// fdcwd is AT_FDCWD in a variable, to pass it as a system call argument.
var fdcwd = unix.AT_FDCWD

// A folder the host made setgid: folders made in it inherit the bit (the
// kernel's rule, documented), folders made elsewhere never get it, and a
// root that is itself setgid is reported in Cmd.Fallback.
func TestSandboxSetgidFolders(t *testing.T) {
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			p := policyFor(t, false)
			sg := filepath.Join(p.Root, "shared")
			require.NoError(t, os.Mkdir(sg, 0o755))
			require.NoError(t, unix.Chmod(sg, 0o2775))
			out, err := run(t, b, p, "mkdir plain shared/sub && chmod 0755 shared/sub; touch shared/f plain/f")
			require.NoError(t, err, out)
			bits, _ := specialBits(t, filepath.Join(p.Root, "plain"))
			assert.Zero(t, bits, "a folder made outside a setgid folder is setgid")
			bits, _ = specialBits(t, filepath.Join(sg, "sub"))
			assert.Equal(t, uint32(unix.S_ISGID), bits, "the kernel's inheritance changed: update modebits_linux.go's doc")
			for _, f := range []string{"shared/f", "plain/f"} {
				bits, _ = specialBits(t, filepath.Join(p.Root, f))
				assert.Zero(t, bits, f)
			}
			c, err := b.Command(Spec{Path: "/bin/true", Dir: p.Root}, p)
			require.NoError(t, err)
			assert.NotContains(t, c.Fallback, "setgid")
			require.NoError(t, unix.Chmod(p.Root, 0o2755))
			c, err = b.Command(Spec{Path: "/bin/true", Dir: p.Root}, p)
			require.NoError(t, err)
			assert.Contains(t, c.Fallback, "setgid")
		})
	}
}

// The filter assembles on every architecture it knows (jumps in reach),
// and each mode rule leads to a test of its mode argument.
func TestFilterProgramAssembles(t *testing.T) {
	for arch, a := range filterArchs {
		for _, families := range [][]uint32{nil, {unix.AF_UNIX}, {unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}} {
			prog, err := filterProgram(a, families)
			require.NoError(t, err, arch)
			tests := 0
			for _, f := range prog {
				if f.Code == unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K && f.K == unix.S_ISUID|unix.S_ISGID {
					tests++
				}
			}
			assert.Equal(t, len(a.modes), tests, "%s: one mode test per rule", arch)
		}
	}
}
