//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// The helper is the host's own binary, re-executed (through
// /proc/self/exe) as the init of the call's PID namespace. It applies the
// Landlock rules and the seccomp filter to itself before it starts the
// command, never to the host process, then reaps every process of the
// namespace and exits with the command's status. Its exit kills whatever
// is left in the namespace.
//
// It is keyed, like Docker's reexec, by argv[0] and an environment
// variable that no ordinary run of a program has: the package's init runs
// the helper and exits when both are present, before the host's main (or a
// test binary's) runs.
const (
	helperArg0 = "llmtoolkit-sandbox-init"
	helperEnv  = "LLMTOOLKIT_SANDBOX_INIT"
)

// helperConfig is what the host tells the helper, as JSON in argv[1].
type helperConfig struct {
	Landlock  bool     `json:"landlock,omitempty"`   // restrict the file system
	Readable  []string `json:"readable,omitempty"`   // folders readable under Landlock
	Writable  []string `json:"writable,omitempty"`   // folders writable under Landlock
	NoNetwork bool     `json:"no_network,omitempty"` // Landlock's TCP rules and the seccomp filter
	MountProc bool     `json:"mount_proc,omitempty"` // in a new mount namespace: mount the namespace's /proc
}

func init() {
	if len(os.Args) < 3 || os.Args[0] != helperArg0 || os.Getenv(helperEnv) != "1" {
		return
	}
	os.Exit(helperMain(os.Args[1], os.Args[2:]))
}

// helperMain sets up the sandbox, runs argv and returns its exit status.
// It writes its own failures to stderr (the command's output) with status
// 126, as shells do for a command that cannot run.
func helperMain(config string, argv []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "llmtoolkit sandbox: %v\n", err)
		return 126
	}
	_ = os.Unsetenv(helperEnv)
	var c helperConfig
	if err := json.Unmarshal([]byte(config), &c); err != nil {
		return fail(fmt.Errorf("bad configuration: %w", err))
	}
	if c.MountProc {
		// Private mounts first, so the new /proc stays in this namespace;
		// a failure only leaves the host's /proc visible.
		if unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "") == nil {
			_ = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
		}
	}
	// Landlock and seccomp apply to the calling thread and the processes it
	// starts: lock this goroutine to its thread and start the command from it.
	runtime.LockOSThread()
	if c.Landlock || c.NoNetwork {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fail(fmt.Errorf("no_new_privs: %w", err))
		}
	}
	if c.Landlock {
		if err := restrictSelf(c.Readable, c.Writable, c.NoNetwork); err != nil {
			return fail(err)
		}
	}
	if c.NoNetwork {
		if err := denySockets(); err != nil {
			return fail(err)
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fail(err)
	}
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		return fail(err)
	}
	return reapUntil(proc.Pid, os.Getpid() == 1)
}

// reapUntil waits for main, reaping every other child (orphans of the
// namespace when init), and returns main's exit status, 128+N for a death
// by signal N.
func reapUntil(main int, init bool) int {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 126
		}
		if pid != main {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// nsState remembers, for the process, whether user namespaces failed, so
// that later calls do not try again. A machine fact, probed once.
var userNSFailed atomic.Bool

// helperCommand prepares the helper to run spec in new namespaces: PID
// always (the containment), network when noNet, mount to show the
// namespace's own /proc. As root it needs no user namespace; otherwise it
// maps the user to itself in a new one. Without either it runs the helper
// uncontained, and says so in Fallback.
func helperCommand(spec Spec, c helperConfig, noNetNS bool, backend string) (*Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: cannot find the program to re-execute: %w", ErrUnavailable, err)
	}
	_ = self // the path is only checked: /proc/self/exe survives a replaced binary
	flags := uintptr(unix.CLONE_NEWPID | unix.CLONE_NEWNS)
	if noNetNS {
		flags |= unix.CLONE_NEWNET
	}
	attr := &syscall.SysProcAttr{Setsid: true, Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	out := &Cmd{Contained: true, Backend: backend}
	if os.Geteuid() != 0 {
		if userNSFailed.Load() {
			attr.Cloneflags = 0
			out.Contained, out.Fallback = false, "no PID namespace: user namespaces are not available to this user"
		} else {
			attr.Cloneflags |= unix.CLONE_NEWUSER
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
			attr.GidMappingsEnableSetgroups = false
		}
	}
	c.MountProc = attr.Cloneflags&unix.CLONE_NEWNS != 0
	cfg, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: "/proc/self/exe",
		Args: append([]string{helperArg0, string(cfg), spec.Path}, spec.Args...),
		Dir:  spec.Dir,
		Env:  append(append([]string(nil), spec.Env...), helperEnv+"=1"),
	}
	cmd.SysProcAttr = attr
	out.Cmd = cmd
	out.kill = func(cmd *exec.Cmd) error { return cmd.Process.Signal(syscall.SIGKILL) }
	return out, nil
}

// StartFallback starts c; when the kernel refuses the user namespace it
// remembers that and starts the command again without namespaces
// (uncontained, Fallback saying why). Commands of backends that need no
// namespace start as they are.
func (c *Cmd) Start() error {
	err := c.Cmd.Start()
	attr := c.Cmd.SysProcAttr
	if err == nil || attr == nil || attr.Cloneflags&unix.CLONE_NEWUSER == 0 || !isNSRefusal(err) {
		return err
	}
	userNSFailed.Store(true)
	retry := &exec.Cmd{Path: c.Cmd.Path, Args: c.Cmd.Args, Dir: c.Cmd.Dir, Env: c.Cmd.Env,
		Stdin: c.Cmd.Stdin, Stdout: c.Cmd.Stdout, Stderr: c.Cmd.Stderr, ExtraFiles: c.Cmd.ExtraFiles}
	retry.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	c.Cmd = retry
	c.Contained = false
	c.Fallback = "no PID namespace: the kernel refused a user namespace (" + err.Error() + ")"
	return c.Cmd.Start()
}

func isNSRefusal(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EUSERS)
}

// Contain returns the backend that only contains commands (policy Off): a
// PID namespace whose init is the helper.
func Contain() Backend { return containBackend{} }

type containBackend struct{}

func (containBackend) Name() string { return "namespace" }

func (containBackend) Command(spec Spec, p Policy) (*Cmd, error) {
	if p.Mode != Off {
		return nil, fmt.Errorf("%w: the namespace backend only contains; it cannot enforce %s", ErrBadPolicy, p.Mode)
	}
	return helperCommand(spec, helperConfig{}, false, "")
}

// absClean returns the absolute, link-free form of dir, as Landlock and
// bind mounts see it.
func absClean(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

func itoa(n int) string { return strconv.Itoa(n) }

// readableOf lists what a sandboxed command may read: the system folders,
// the folder of the program it runs, the root and the policy's extras.
func readableOf(spec Spec, p Policy, root string) []string {
	out := append([]string(nil), SystemFolders...)
	if filepath.IsAbs(spec.Path) {
		out = append(out, filepath.Dir(spec.Path))
	}
	out = append(out, root)
	for _, r := range p.Readable {
		if abs, err := absClean(r); err == nil {
			out = append(out, abs)
		}
	}
	return out
}
