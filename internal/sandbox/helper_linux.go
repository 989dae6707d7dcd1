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
	"sync"
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
	if c.Landlock && os.Geteuid() == 0 { // others lost their capabilities at exec; no_new_privs keeps them lost
		if err := dropCapabilities(); err != nil {
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

// userNS reports whether this process may create user namespaces (needed
// for a PID namespace when not root). A machine fact, probed once by
// starting /bin/true in one.
var userNS = sync.OnceValue(func() error {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the kernel refuses this user a user namespace: %w", err)
	}
	return nil
})

// nsAttr returns the process attributes of a command contained in a new
// PID namespace (and a mount namespace, and a network namespace when
// noNet): as root directly, otherwise inside a user namespace that maps
// the user to itself. Without either it returns attributes without
// namespaces and the reason.
func nsAttr(noNet bool) (*syscall.SysProcAttr, string) {
	flags := uintptr(unix.CLONE_NEWPID | unix.CLONE_NEWNS)
	if noNet {
		flags |= unix.CLONE_NEWNET
	}
	attr := &syscall.SysProcAttr{Setsid: true, Cloneflags: flags}
	if os.Geteuid() == 0 {
		return attr, ""
	}
	if err := userNS(); err != nil {
		return &syscall.SysProcAttr{Setsid: true}, "no PID namespace: " + err.Error()
	}
	attr.Cloneflags |= unix.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	return attr, ""
}

// helperCommand prepares the helper to run spec with configuration c, in
// new namespaces where it can (see nsAttr); Fallback says when it cannot.
func helperCommand(spec Spec, c helperConfig, noNetNS bool, backend string) (*Cmd, error) {
	attr, fallback := nsAttr(noNetNS)
	c.MountProc = attr.Cloneflags&unix.CLONE_NEWNS != 0
	cfg, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: "/proc/self/exe", // the running program, even if its file was replaced
		Args: append([]string{helperArg0, string(cfg), spec.Path}, spec.Args...),
		Dir:  spec.Dir,
		Env:  append(append([]string(nil), spec.Env...), helperEnv+"=1"),
	}
	cmd.SysProcAttr = attr
	return &Cmd{Cmd: cmd, Contained: fallback == "", Fallback: fallback, Backend: backend, kill: killProcess}, nil
}

func killProcess(cmd *exec.Cmd) error { return cmd.Process.Signal(syscall.SIGKILL) }

// Contains reports whether [Contain]'s commands are contained here (root,
// or user namespaces allowed), and otherwise why not.
func Contains() (bool, string) {
	if _, why := nsAttr(false); why != "" {
		return false, why
	}
	return true, ""
}

// Contain returns the backend that only contains commands (policy Off): the
// command runs as the init of a new PID namespace, so its end, or its kill,
// ends every process it started. No helper: the command itself is init.
func Contain() Backend { return containBackend{} }

type containBackend struct{}

func (containBackend) Name() string { return "namespace" }

func (containBackend) Command(spec Spec, p Policy) (*Cmd, error) {
	if p.Mode != Off {
		return nil, fmt.Errorf("%w: the namespace backend only contains; it cannot enforce %s", ErrBadPolicy, p.Mode)
	}
	attr, fallback := nsAttr(false)
	attr.Cloneflags &^= unix.CLONE_NEWNS // nothing to mount: the command is init
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = spec.Dir, spec.Env, attr
	return &Cmd{Cmd: cmd, Contained: fallback == "", Fallback: fallback, kill: killProcess}, nil
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

// dropCapabilities clears this thread's capabilities (and the bounding and
// ambient sets), so that a command started by root cannot load modules,
// read raw devices past Landlock, or regain them: root stays uid 0 for
// file ownership, nothing more.
func dropCapabilities() error {
	for c := 0; c <= 63; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	return nil
}
