//go:build linux

package sandbox

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Bubblewrap is the backend that runs commands under bwrap, the command as
// the init of the PID namespace (--as-pid-1: its end ends every process it
// started, and bwrap waits for that): new user, PID,
// IPC, UTS, cgroup and (without network) network namespaces, a new mount
// tree holding only the system folders read-only, the root (writable under
// WorkspaceWrite), the private temporary folder writable, a fresh /dev
// and /proc.
//
// bwrap itself runs as the init of a PID namespace the host owns, with a
// parent-death signal, so that a host killed at any moment takes every
// process of the command with it: after its clone, bwrap's child waits
// for bwrap to let it go on (it arms its own parent-death signal only
// later), and a bwrap killed with its host before that (by the signal it
// inherits as root, or arms itself after the clone) would otherwise leave
// it behind, still bwrap, pid 1 of its namespace, reparented to the
// machine's init, waiting forever. As root that namespace is the helper's
// bwrap stage's; otherwise bwrap is
// started in a new user namespace (mapping the user to itself, so bwrap
// runs unprivileged in it as it would outside) and PID namespace of its
// own. Where such a namespace is refused (a setuid bwrap without
// unprivileged user namespaces, say) bwrap runs directly and the window
// stays: [NewBubblewrap] logs it once.
type Bubblewrap struct {
	path  string
	ownNS bool // not root: bwrap starts in a user and PID namespace of its own (see bwrapNS)
}

// bwrapFacts is what bwrapProbe learnt of one bwrap path.
type bwrapFacts struct {
	err   error // nil when it runs
	ownNS bool  // it runs in bwrapNS's namespaces
}

// bwrapWorks caches, per bwrap path, whether it runs here: installed is not
// enough, user namespaces may be refused. A machine fact, probed once per
// path.
var bwrapWorks sync.Map // path -> bwrapFacts

// bwrapProbe finds bwrap in PATH and runs it once (when the host is not
// root, in bwrapNS's namespaces first).
func bwrapProbe() (string, bwrapFacts) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", bwrapFacts{err: fmt.Errorf("%w: bubblewrap: bwrap is not installed (apt-get install bubblewrap)", ErrUnavailable)}
	}
	if v, ok := bwrapWorks.Load(path); ok {
		return path, v.(bwrapFacts)
	}
	probe := func(attr *syscall.SysProcAttr) error {
		cmd := exec.Command(path, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--", "true")
		cmd.SysProcAttr = attr
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: bubblewrap: %s does not run here: %w: %s", ErrUnavailable, path, err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	var facts bwrapFacts
	if os.Geteuid() == 0 { // bwrap runs as nobody then (see Command): probe that
		facts.err = probe(&syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}})
	} else if nsErr := probe(bwrapNS()); nsErr == nil {
		facts.ownNS = true
	} else if facts.err = probe(nil); facts.err == nil {
		slog.Warn("sandbox: bubblewrap runs here, but not in a user and PID namespace of the host's own: a host killed while bwrap starts a command may leave bwrap's child behind",
			slog.String("bwrap", path), slog.String("error", nsErr.Error()))
	}
	bwrapWorks.Store(path, facts)
	return path, facts
}

// bwrapNS returns the attributes that start bwrap, when the host is not
// root, as the init of a new PID namespace owned by a new user namespace
// that maps the user (and group) to itself, with a parent-death signal:
// bwrap runs in it unprivileged, as it would outside, and its end (the
// host's, by that signal) ends every process of the namespace, bwrap's
// child included at any moment of its start.
func bwrapNS() *syscall.SysProcAttr {
	uid, gid := os.Geteuid(), os.Getegid()
	return &syscall.SysProcAttr{Setsid: true, Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}}
}

// NewBubblewrap returns the bubblewrap backend, or an error wrapping
// ErrUnavailable when bwrap is missing or cannot run here.
func NewBubblewrap() (*Bubblewrap, error) {
	path, facts := bwrapProbe()
	if facts.err != nil {
		return nil, facts.err
	}
	return &Bubblewrap{path: path, ownNS: facts.ownNS}, nil
}

// Name returns "bubblewrap".
func (*Bubblewrap) Name() string { return "bubblewrap" }

// bwrapInit is where the helper's binary is bound in bubblewrap's tree
// (bwrap runs it by this path; its base name is the helper's argv[0]).
const bwrapInit = "/.llmtoolkit/" + helperArg0

// hostExe returns the running program's file, which bubblewrap binds as
// the init of its tree.
var hostExe = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
})

// Command prepares spec to run under p: bwrap builds the tree and the
// namespaces and runs the helper as their init, which installs the seccomp
// filter, closes inherited descriptors and starts the command. When the
// host is root, the helper runs first outside bwrap too (its bwrap stage):
// it prepares the root and the temporary folder for nobody, becomes
// nobody and execs bwrap, so that the command holds no capability and no
// root-owned file is its own.
func (b *Bubblewrap) Command(spec Spec, p Policy) (*Cmd, error) { return b.command(spec, p, nil) }

// command prepares spec under p; with server (its end of a session's
// socketpair) bwrap's init is the helper's stage "server" instead, given
// the capabilities it forks the commands with (a PID namespace each, their
// kill) in bwrap's user namespace.
func (b *Bubblewrap) command(spec Spec, p Policy, server *os.File) (*Cmd, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if p.Loopback != nil && !p.Network {
		return nil, fmt.Errorf("%w: bubblewrap: %w", ErrBadPolicy, errNoSharedNetwork)
	}
	exe, err := hostExe()
	if err != nil {
		return nil, fmt.Errorf("%w: bubblewrap: the running program's file: %w", ErrUnavailable, err)
	}
	args := []string{b.path, "--unshare-all", "--die-with-parent", "--as-pid-1"}
	if !spec.TTY { // a terminal is the call's own pty, in the session Setsid made
		args = append(args, "--new-session")
	}
	if server != nil {
		args = append(args, "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_KILL", "--cap-add", "CAP_SETPCAP") // SETPCAP: to empty the bounding set
	}
	if p.Mode == Off || p.Network {
		args = append(args, "--share-net")
	}
	var stage helperConfig
	if p.Mode == Off {
		args = append(args, "--bind", "/", "/", "--dev-bind", "/dev", "/dev")
	} else {
		tmp, err := absClean(p.Tmp)
		if err != nil {
			return nil, fmt.Errorf("%w: temporary folder: %w", ErrBadPolicy, err)
		}
		root, err := absClean(p.Root)
		if err != nil {
			return nil, fmt.Errorf("%w: root: %w", ErrBadPolicy, err)
		}
		args = append(args, "--dev", "/dev", "--tmpfs", "/dev/shm")
		readable := readableOf(spec, p, root)
		for _, r := range readable {
			fi, err := os.Lstat(r)
			switch {
			case err != nil:
				continue
			case fi.Mode()&os.ModeSymlink != 0: // /lib -> usr/lib on merged systems
				if target, err := os.Readlink(r); err == nil {
					args = append(args, "--symlink", target, r)
				}
			case r == root && p.Mode == WorkspaceWrite:
				args = append(args, "--bind", r, r)
			default:
				args = append(args, "--ro-bind", r, r)
			}
		}
		args = append(args, "--bind", tmp, tmp)
		hidden, dirs := hiddenOf(p)
		for i, h := range hidden { // after the binds they cover
			if dirs[i] {
				args = append(args, "--perms", "0555", "--tmpfs", h, "--remount-ro", h)
			} else {
				args = append(args, "--ro-bind", "/dev/null", h)
			}
		}
		writable := []string{tmp}
		if p.Mode == WorkspaceWrite {
			writable = append(writable, root)
		}
		stage = helperConfig{Stage: "bwrap", MountNS: true, Drop: os.Geteuid() == 0,
			Readable: append(readable, exe), Writable: writable, IDMap: []string{root, tmp}}
	}
	args = append(args, "--ro-bind", exe, bwrapInit, "--proc", "/proc")
	if p.Mode != Off {
		args = append(args, "--remount-ro", "/") // bwrap's own root, where mount points are made
	}
	if spec.Dir != "" {
		args = append(args, "--chdir", spec.Dir)
	}
	// The init inside: the socket filter, every descriptor but 0-2 closed.
	init := helperConfig{Confine: p.Mode != Off, NoNetwork: p.Mode != Off && !p.Network, AllowUnix: true, TTY: spec.TTY}
	files := helperFiles{sock: server}
	var link *proxyLink
	switch {
	case server != nil:
		// The session's network namespace holds only a loopback: it is
		// the boundary, so TCP and Internet sockets are allowed inside
		// it (as in Landlock's shared one).
		init.Stage, init.NoNetwork, init.Proxy = "server", false, p.Proxy != nil
	case p.Proxy != nil:
		// So is the command's own, where the proxy's listener is (bwrap
		// sets its loopback up).
		if link, err = newProxyLink(p.Proxy); err != nil {
			return nil, err
		}
		init.NoNetwork, files.proxy = false, link.theirs
	}
	fail := func(err error) (*Cmd, error) {
		if link != nil {
			link.mine.Close()
			link.theirs.Close()
		}
		return nil, err
	}
	var cmd *exec.Cmd
	if stage.Drop {
		// Root: the helper's bwrap stage, in a mount namespace of its own,
		// execs bwrap with init's command line.
		inner, err := newHelperCmd(bwrapInit, bwrapInit, spec, init, files)
		if err != nil {
			return fail(err)
		}
		stage.PIDNS = true // see SysProcAttr below; its own /proc, for the ID maps
		stage.Exec = append(args, "--")
		stage.Exec = append(stage.Exec, inner.Args...)
		cmd, err = newHelperCmd("/proc/self/exe", helperArg0, Spec{Dir: spec.Dir, Env: spec.Env}, stage, files)
		if err != nil {
			return fail(err)
		}
		cmd.Args = cmd.Args[:2] // the configuration; bwrap's argv is in it
		// A PID namespace of its own, whose init is bwrap (the helper
		// execs it), dying with the host: bwrap's child, the sandbox's
		// init, arms its own parent-death signal only once it runs, so a
		// host killed between bwrap's clone and that moment would leave it
		// behind; the end of this namespace's init ends it too.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL}
		ttyAttr(cmd.SysProcAttr, spec.TTY)
	} else {
		inner, err := newHelperCmd(bwrapInit, bwrapInit, spec, init, files)
		if err != nil {
			return fail(err)
		}
		cmd = exec.Command(b.path)
		cmd.Args = append(append(args, "--"), inner.Args...)
		cmd.Dir, cmd.Env, cmd.ExtraFiles = spec.Dir, inner.Env, inner.ExtraFiles
		// Not root: bwrap as the init of a PID namespace of the host's own,
		// dying with it, for the same reason as the root's above. Without
		// one, no parent-death signal: bwrap arms its own after its clone,
		// and until then a host's death must not end it, or its child
		// would wait forever from that moment on instead.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if b.ownNS {
			cmd.SysProcAttr = bwrapNS()
		}
		ttyAttr(cmd.SysProcAttr, spec.TTY)
	}
	return &Cmd{Cmd: cmd, Contained: true, Backend: b.Name(), Fallback: setgidNote(stage.Writable), kill: killBwrap, proxy: link}, nil
}

// killBwrap kills the init of bwrap's PID namespace (bwrap's child) first
// and waits, through a pidfd, until it has exited: its exit empties the
// namespace. Then it kills bwrap, whose Wait thus returns only once every
// process of the command is gone.
func killBwrap(cmd *exec.Cmd) error {
	pid := cmd.Process.Pid
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	for _, f := range strings.Fields(string(data)) {
		child, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		// bwrap is alive and has not reaped it: the pid is still its child.
		fd, err := unix.PidfdOpen(child, 0)
		if err != nil {
			continue
		}
		if unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
				n, err := unix.Poll(fds, 100)
				if n > 0 || (err != nil && err != unix.EINTR) {
					break
				}
			}
		}
		unix.Close(fd)
	}
	return cmd.Process.Signal(syscall.SIGKILL)
}
