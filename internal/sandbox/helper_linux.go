//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// The helper is the host's own binary, re-executed (through
// /proc/self/exe, or bound into bubblewrap's tree) as the init of the
// call's PID namespace. It sets up the sandbox on itself, never on the host
// process, starts the command as its only child, forwards the signals it
// receives to it, reaps every process of the namespace and exits with the
// command's status (128+N for a death by signal N). Its exit kills whatever
// is left in the namespace, and it dies with the host (a parent-death
// signal, checked against a host already gone through a pidfd).
//
// Before it starts the command it closes every descriptor but 0-2, drops
// every capability (bounding and ambient sets included) and, when the host
// is root, becomes the unprivileged user nobody (see [nobody] and
// view_linux.go for the folders it must still write).
//
// It has two stages. "init" (the default) is the above. "bwrap" runs when
// the host is root and bubblewrap is the backend: in a private mount
// namespace it prepares the folders for nobody, drops to nobody and execs
// bwrap, which then runs the init stage inside its tree.
//
// It is keyed, like Docker's reexec, by argv[0] and an environment
// variable that no ordinary run of a program has: the package's init runs
// the helper and exits when both are present, before the host's main (or a
// test binary's) runs.
const (
	helperArg0 = "llmtoolkit-sandbox-init"
	helperEnv  = "LLMTOOLKIT_SANDBOX_INIT"
	// parentFD is the helper's descriptor of a pidfd on the host process.
	parentFD = 3
)

// helperConfig is what the host tells the helper, as JSON in argv[1].
type helperConfig struct {
	Stage     string   `json:"stage,omitempty"`      // "" (init) or "bwrap"
	Landlock  bool     `json:"landlock,omitempty"`   // restrict the file system
	Readable  []string `json:"readable,omitempty"`   // folders readable (Landlock) or reached (bwrap stage)
	Writable  []string `json:"writable,omitempty"`   // folders writable
	NoNetwork bool     `json:"no_network,omitempty"` // Landlock's TCP rules, and no Internet socket family
	AllowUnix bool     `json:"allow_unix,omitempty"` // with NoNetwork, still allow Unix sockets (no host socket is visible)
	MountNS   bool     `json:"mount_ns,omitempty"`   // in a private mount namespace: build the view (view_linux.go)
	PIDNS     bool     `json:"pid_ns,omitempty"`     // in a new PID namespace: mount its /proc
	Drop      bool     `json:"drop,omitempty"`       // the host is root: run the command as nobody
	Dir       string   `json:"dir,omitempty"`        // the command's working folder, entered again once the view is built
	Parent    bool     `json:"parent,omitempty"`     // parentFD is a pidfd on the host: die with it
	Exec      []string `json:"exec,omitempty"`       // bwrap stage: bwrap's argv
	Confine   bool     `json:"confine,omitempty"`    // a policy, not only containment: no_new_privs, seccomp, no capability
	IDMap     []string `json:"idmap,omitempty"`      // with Drop: folders whose owner's files become nobody's (the root, the temporary folder)
	Hidden    []string `json:"hidden,omitempty"`     // files and folders covered by empty read-only ones (Policy.Hidden)
	TTY       bool     `json:"tty,omitempty"`        // fd 0 is the controlling terminal: run the command as its foreground group
	NetFD     int      `json:"net_fd,omitempty"`     // a network namespace to join first (Policy.Loopback); 0: none
	SockFD    int      `json:"sock_fd,omitempty"`    // stage "server": its end of the session's socketpair
	ProxyFD   int      `json:"proxy_fd,omitempty"`   // Policy.Proxy: the socket the listener is passed to the host on (kept by the bwrap stage)
	Proxy     bool     `json:"proxy,omitempty"`      // stage "server": a proxy listener per command
	LoopUp    bool     `json:"loop_up,omitempty"`    // in a new network namespace: set its loopback up
	OwnPIDNS  bool     `json:"own_pid_ns,omitempty"` // stage "server": run again in a PID namespace its user namespace owns (see serveMain)
}

// helperFiles are the descriptors a helper is given beside its pidfd on
// the host.
type helperFiles struct {
	net   *os.File // a network namespace to join (Policy.Loopback)
	sock  *os.File // stage "server": its end of the session's socketpair
	proxy *os.File // Policy.Proxy: its end of the proxy's socketpair
}

func init() {
	if len(os.Args) < 2 || filepath.Base(os.Args[0]) != helperArg0 || os.Getenv(helperEnv) != "1" {
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
	var c helperConfig
	if err := json.Unmarshal([]byte(config), &c); err != nil {
		return fail(fmt.Errorf("bad configuration: %w", err))
	}
	if c.NetFD > 0 {
		if err := joinNetwork(c.NetFD); err != nil {
			return fail(err)
		}
	}
	var keep []int
	if c.Parent {
		keep = append(keep, parentFD)
	}
	if c.SockFD > 0 {
		keep = append(keep, c.SockFD)
	}
	if c.ProxyFD > 0 {
		keep = append(keep, c.ProxyFD)
	}
	closeInherited(keep...)
	if err := dieWithParent(c.Parent); err != nil {
		return fail(err)
	}
	if c.LoopUp {
		if err := loopbackUp(); err != nil {
			return fail(err)
		}
	}
	if c.ProxyFD > 0 && c.Stage == "" {
		if err := helperProxy(c.ProxyFD); err != nil {
			return fail(err)
		}
	}
	// Capabilities, Landlock and seccomp apply to the calling thread and
	// the processes it starts: lock this goroutine to its thread and start
	// the command (or exec bwrap) from it.
	runtime.LockOSThread()
	if c.MountNS {
		if err := buildView(c); err != nil {
			return fail(err)
		}
	}
	if c.Stage == "bwrap" {
		return fail(execBwrap(c))
	}
	if c.Stage == "server" {
		return serveMain(c)
	}
	_ = os.Unsetenv(helperEnv)
	if len(argv) == 0 {
		return fail(errors.New("no command"))
	}
	if c.Confine {
		if err := confine(c); err != nil {
			return fail(err)
		}
	}
	if c.Dir != "" { // the working folder may have been mounted over
		if err := os.Chdir(c.Dir); err != nil {
			return fail(err)
		}
	}
	if c.Parent {
		unix.CloseOnExec(parentFD) // kept for watchHost, never the command's
	}
	// The command runs as the same user: it must not read this process's
	// descriptors or memory through /proc/1.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fail(err)
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs)
	attr := &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}}
	if c.TTY {
		// As a shell does: the command in a group of its own, in the
		// terminal's foreground, so that the terminal's signals (Ctrl-C)
		// reach it alone; the helper still forwards its own.
		attr.Sys = &syscall.SysProcAttr{Foreground: true, Ctty: 0}
	}
	proc, err := os.StartProcess(path, argv, attr)
	if err != nil {
		return fail(err)
	}
	go forwardSignals(sigs, proc.Pid)
	if c.Parent {
		go watchHost(proc.Pid)
	}
	return reapUntil(proc.Pid)
}

// watchHost ends the command and this init (and with it the init's PID
// namespace) when the host ends. dieWithParent alone misses one moment of
// a host's death: once its last thread has handed its children to the
// system's init, a parent-death signal set later never comes, and until
// that thread is released a moment after, the host's pidfd is not yet
// readable; a helper that checked in between ran its command on, the
// host gone (TestSandboxDiesWithHostWhileStarting, 1 round in about 360
// under load). The pidfd becomes readable then, and this watch sees it.
func watchHost(pid int) {
	defer guard.Recover("sandbox init: host watch", nil, nil) // never take the init down
	if gone, err := hostGone(-1); err == nil && gone {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		os.Exit(128 + int(syscall.SIGKILL))
	}
}

// hostGone polls the host's pidfd (parentFD) for up to timeout
// milliseconds (-1: until it ends) and reports whether the host has ended.
func hostGone(timeout int) (bool, error) {
	fds := []unix.PollFd{{Fd: parentFD, Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, timeout)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n > 0, err
	}
}

// confine applies the policy to this thread, and so to the command:
// applyPolicy, then the drop of every capability and, when the host is
// root, of the user.
func confine(c helperConfig) error {
	if err := applyPolicy(c); err != nil {
		return err
	}
	if err := dropPrivileges(c.Drop); err != nil {
		return err
	}
	return dieWithParent(c.Parent) // a change of user clears the parent-death signal
}

// applyPolicy applies what a command's policy restricts to this thread:
// no_new_privs, Landlock (when the backend is Landlock), then the seccomp
// filter. A per-call helper (confine) and a session's server
// (confineServer) both apply it, so their commands get the same policy.
func applyPolicy(c helperConfig) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if c.Landlock {
		if err := restrictSelf(c.Readable, c.Writable, c.NoNetwork); err != nil {
			return err
		}
	}
	return installFilter(c.NoNetwork, c.AllowUnix)
}

// execBwrap ends the bwrap stage: nobody, dying with the host, execs bwrap
// (which runs the init stage).
func execBwrap(c helperConfig) error {
	if len(c.Exec) == 0 {
		return errors.New("bwrap stage without a bwrap command")
	}
	if err := dropUser(); err != nil {
		return err
	}
	if err := dieWithParent(c.Parent); err != nil {
		return err
	}
	return fmt.Errorf("exec %s: %w", c.Exec[0], unix.Exec(c.Exec[0], c.Exec, os.Environ()))
}

// forwardSignals passes every signal the init receives on to the command,
// as an init must; the Go runtime's own (SIGURG) and SIGCHLD aside.
func forwardSignals(sigs <-chan os.Signal, pid int) {
	defer guard.Recover("sandbox init: signal forwarder", nil, nil) // never take the init down
	for s := range sigs {
		sig, ok := s.(syscall.Signal)
		if !ok || sig == syscall.SIGCHLD || sig == syscall.SIGURG {
			continue
		}
		_ = syscall.Kill(pid, sig)
	}
}

// reapUntil waits for main, reaping every other child (orphans of the
// namespace when init), and returns main's exit status, 128+N for a death
// by signal N.
func reapUntil(main int) int {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 126
		}
		if pid != main || ws.Stopped() || ws.Continued() {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// closeInherited closes every descriptor above 2 that this process
// inherited (those without close-on-exec: the Go runtime opens its own with
// it), keep aside, and marks any other close-on-exec, so that none reaches
// the command: a file or socket the host got from its own parent would
// otherwise cross every rule of the sandbox.
func closeInherited(keep ...int) {
	if entries, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, e := range entries {
			fd, err := strconv.Atoi(e.Name())
			if err != nil || fd <= 2 || slices.Contains(keep, fd) {
				continue
			}
			if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
				_ = unix.Close(fd)
			}
		}
	}
	first := uint(3)
	for slices.Contains(keep, int(first)) {
		first++
	}
	_ = unix.CloseRange(first, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
}

// dieWithParent makes the kernel kill this process when the host's thread
// that started it ends, then checks, through the pidfd the host passed,
// that the host is not already gone (the signal would never come).
func dieWithParent(check bool) error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("parent-death signal: %w", err)
	}
	if !check {
		return nil
	}
	gone, err := hostGone(0)
	if err != nil {
		return fmt.Errorf("parent pidfd: %w", err)
	}
	if gone {
		return errors.New("the host process is gone")
	}
	return nil
}

// hostPidfd is a pidfd on this process, passed to every helper (as
// parentFD) so that it can tell whether the host is still alive. Opened
// once, never closed.
var hostPidfd = sync.OnceValues(func() (*os.File, error) {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "llmtoolkit-host-pidfd"), nil
})

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
// the user to itself (to root of the namespace when asRoot, so that the
// helper keeps, across its exec, the capabilities it needs to mount; it
// drops them all before the command starts). Without either it returns
// attributes without namespaces and the reason.
func nsAttr(noNet, asRoot bool) (*syscall.SysProcAttr, string) {
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
	uid, gid := os.Getuid(), os.Getgid()
	if asRoot {
		uid, gid = 0, 0
	}
	attr.Cloneflags |= unix.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: os.Getgid(), Size: 1}}
	return attr, ""
}

// helperCommand prepares the helper to run spec with configuration c, in
// new namespaces where it can (see nsAttr); Fallback says when it cannot.
func helperCommand(spec Spec, c helperConfig, noNetNS bool, backend string, files helperFiles) (*Cmd, error) {
	attr, fallback := nsAttr(noNetNS, c.Confine)
	switch {
	case !c.Confine: // nothing to mount: the host's /proc shows the namespace's processes too
		attr.Cloneflags &^= unix.CLONE_NEWNS
	case attr.Cloneflags != 0:
		// As bubblewrap's: no System V IPC object (shared memory, semaphores,
		// queues) of the host or of another command, no shared hostname.
		attr.Cloneflags |= unix.CLONE_NEWIPC | unix.CLONE_NEWUTS
	default:
		fallback += "; no IPC or UTS namespace: the host's System V shared memory is reachable"
	}
	c.MountNS = attr.Cloneflags&unix.CLONE_NEWNS != 0
	c.PIDNS = attr.Cloneflags&unix.CLONE_NEWPID != 0
	c.Drop = c.Confine && os.Geteuid() == 0
	c.Dir = spec.Dir
	c.TTY = spec.TTY
	ttyAttr(attr, spec.TTY)
	if len(c.Hidden) > 0 && !c.MountNS {
		return nil, fmt.Errorf("%w: %s: hiding paths (Policy.Hidden) needs a mount namespace, and user namespaces are refused here", ErrUnavailable, backend)
	}
	if c.Confine && !c.MountNS {
		fallback += "; metadata writes (chmod, touch) outside the writable folders are not refused"
	}
	cmd, err := newHelperCmd("/proc/self/exe", helperArg0, spec, c, files) // the running program, even if its file was replaced
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr = attr
	return &Cmd{Cmd: cmd, Contained: attr.Cloneflags&unix.CLONE_NEWPID != 0, Fallback: strings.TrimPrefix(fallback, "; "), Backend: backend, kill: killProcess}, nil
}

// newHelperCmd returns the command that runs the helper at path (argv[0]
// arg0) with configuration c on spec, passing it the host's pidfd and the
// files set (numbered in this order: pidfd, sock, proxy, net, so that the
// bwrap stage and the init it execs number them alike).
func newHelperCmd(path, arg0 string, spec Spec, c helperConfig, files helperFiles) (*exec.Cmd, error) {
	pidfd, err := hostPidfd()
	if err == nil {
		c.Parent = true
	}
	var extra []*os.File
	if c.Parent {
		extra = append(extra, pidfd) // parentFD
	}
	if files.sock != nil {
		c.SockFD = 3 + len(extra)
		extra = append(extra, files.sock)
	}
	if files.proxy != nil {
		c.ProxyFD = 3 + len(extra)
		extra = append(extra, files.proxy)
	}
	if files.net != nil {
		c.NetFD = 3 + len(extra)
		extra = append(extra, files.net)
	}
	cfg, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: path,
		Args: append([]string{arg0, string(cfg), spec.Path}, spec.Args...),
		Dir:  spec.Dir,
		Env:  append(append([]string(nil), spec.Env...), helperEnv+"=1"),
	}
	cmd.ExtraFiles = extra
	return cmd, nil
}

// ttyAttr makes the terminal on the standard streams (fd 0 in the child)
// the controlling terminal of the new session, when tty.
func ttyAttr(attr *syscall.SysProcAttr, tty bool) {
	if tty {
		attr.Setsid, attr.Setctty, attr.Ctty = true, true, 0
	}
}

func killProcess(cmd *exec.Cmd) error { return cmd.Process.Signal(syscall.SIGKILL) }

// Contains reports whether [Contain]'s commands are contained here (root,
// or user namespaces allowed), and otherwise why not.
func Contains() (bool, string) {
	if _, why := nsAttr(false, false); why != "" {
		return false, why
	}
	return true, ""
}

// Contain returns the backend that only contains commands (policy Off): the
// command runs under the helper, the init of a new PID namespace, so its
// end, or its kill, ends every process it started, and it dies with the
// host. Nothing else is restricted.
func Contain() Backend { return containBackend{} }

type containBackend struct{}

func (containBackend) Name() string { return "namespace" }

func (containBackend) Command(spec Spec, p Policy) (*Cmd, error) {
	if p.Mode != Off {
		return nil, fmt.Errorf("%w: the namespace backend only contains; it cannot enforce %s", ErrBadPolicy, p.Mode)
	}
	c, err := helperCommand(spec, helperConfig{}, false, "", helperFiles{})
	if err != nil {
		return nil, err
	}
	return c, nil
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
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(r string) bool { // bwrap refuses a second --symlink /bin
		dup := seen[r]
		seen[r] = true
		return dup
	})
}

// hiddenOf returns the policy's hidden paths that exist, link-free, with
// whether each is a folder; a path inside another hidden folder is left
// out (the folder's cover hides it).
func hiddenOf(p Policy) (paths []string, dirs []bool) {
	for _, h := range p.Hidden {
		abs, err := absClean(h)
		if err != nil {
			continue // does not exist: nothing to hide
		}
		fi, err := os.Stat(abs)
		if err != nil {
			continue
		}
		paths, dirs = append(paths, abs), append(dirs, fi.IsDir())
	}
	var outPaths []string
	var outDirs []bool
	for i, a := range paths {
		inside := false
		for j, b := range paths {
			if i != j && dirs[j] && strings.HasPrefix(a, b+"/") {
				inside = true
			}
			if i > j && a == b {
				inside = true // a duplicate
			}
		}
		if !inside {
			outPaths, outDirs = append(outPaths, a), append(outDirs, dirs[i])
		}
	}
	return outPaths, outDirs
}
