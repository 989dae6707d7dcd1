// Package sandbox runs a command confined by the operating system: a
// [Policy] says what the command may write and whether it may use the
// network, and a [Backend] enforces it (bubblewrap or Landlock on Linux).
// Every backend also contains the command: killing it with [Cmd.Kill] ends
// every process it started, however they detach (a PID namespace whose init
// dies with the call).
//
// The Backend interface is the seam for other engines (a container, a
// remote sandbox): they implement Command and Name.
//
// Every backend, [Contain] included, runs the command under the helper: the
// host binary re-executed (through /proc/self/exe, or bound into
// bubblewrap's tree) as llmtoolkit-sandbox-init, keyed by argv[0] and an
// environment variable and caught by this package's init before any main,
// test binaries included. The helper is the init of the PID namespace: it
// starts the command as its only child, forwards every signal it gets to
// it, reaps orphans, exits with the command's status (128+N for signal N),
// and dies with the host (a parent-death signal, checked through a pidfd
// against a host already gone). Under a policy it also, before the command
// starts: closes every inherited descriptor but 0-2; installs the one
// seccomp filter of both backends (seccomp_linux.go: socket() only for
// Unix, IPv4, IPv6 and netlink with the network, only Unix under
// bubblewrap without it, none under Landlock without it; never vsock or
// packet; no io_uring; no setuid or setgid bit: chmod, fchmod, fchmodat,
// fchmodat2, mknod, mknodat and creating opens whose mode holds one fail
// with EPERM, openat2 with ENOSYS, see modebits_linux.go); sets
// no_new_privs; drops every
// capability, bounding and ambient sets included; and, when the host is
// root, becomes nobody (uid and gid 65534, no groups), so that root-owned
// files such as /etc/shadow are not its own. The root and the temporary
// folder are then mounted through idmapped mounts that show their owner's
// files as nobody's (what it writes is stored as the owner's), and parent
// folders nobody cannot search are covered by a tmpfs holding only the way
// down (view_linux.go).
//
// Who holds what: bubblewrap builds the tree (new user, PID, IPC, UTS,
// cgroup and network namespaces; only the system folders, the root and
// TMPDIR, read-only but for the writable ones, so metadata writes fail with
// EROFS); as root the helper's bwrap stage prepares the folders for
// nobody and execs bwrap as nobody. bwrap itself is the init of a PID
// namespace of the host's that dies with it (the bwrap stage's as root,
// otherwise a user and PID namespace made for it), so that a host killed
// at any moment of bwrap's start, before bwrap's child has armed its own
// parent-death signal, leaves nothing behind. Landlock: the helper starts in new
// PID, mount, IPC and UTS namespaces (and network without the network),
// applies Landlock (file contents, TCP, signals, abstract sockets) and, in
// its private mount namespace, makes every mount read-only but the
// writable folders, which refuses chmod, chown and touch that Landlock
// cannot express; where no namespace is given (no user namespaces),
// Cmd.Fallback says that metadata writes are not refused and System V IPC
// is shared.
//
// One network per session: [NewLoopbackNetwork] makes (as root) a network
// namespace holding only a loopback that commands join through
// [Policy].Loopback instead of a new one each (Landlock only; the helper
// enters it before anything else), so a server one command starts answers
// the next on localhost and nothing outside is reached; inside it the
// seccomp filter and Landlock allow TCP, the namespace being the boundary.
// Each command still gets its own PID namespace and mount tree.
//
// One sandbox per session: [NewSession] starts the helper once in its
// stage "server" (session_linux.go; under Landlock, or as bubblewrap's
// init, given CAP_SYS_ADMIN, CAP_KILL and CAP_SETPCAP in bwrap's user
// namespace, whose loopback-only network is then the session's): it makes
// the namespaces and the view once, applies the policy to its own thread and
// forks, from that thread, each command a [Session]'s Command is given
// (its streams passed over a socketpair): ~2 ms a command instead of
// ~20. A command inherits the policy (no_new_privs, Landlock, the seccomp
// filter, no capability: the server keeps its few in its effective set
// only, with no bounding, inheritable or ambient one, so an exec leaves
// none; nobody when the host is root), runs in a PID namespace of its own
// (so its end or kill ends every process it started) and shares the
// session's IPC, UTS, network and mount namespaces and /proc. Its init is
// a reaper (reaper_linux.go: a clone of the server running raw system
// calls only, sharing its memory on amd64) and the command its pid 2, so a signal it sends itself (kill $$)
// acts as anywhere else, a signal to pid 1 is passed on to it and orphans
// are reaped; under bubblewrap the server runs in a PID namespace of its
// own user namespace, to which its thread returns after forking each
// command. A terminal's command (Spec.TTY) runs there too, its pty's end
// passed as its standard streams and made its controlling terminal (so
// Ctrl-C reaches it); a command under another policy gets a sandbox of its own from
// the backend. A server that dies (killed,
// crashed) loses its commands ([ErrServerLost]) and is replaced at the
// next command, a bounded number of times a minute.
//
// One way out of a closed network: a policy with a [Proxy] (Network off)
// gets a TCP listener on 127.0.0.1 inside the command's network namespace
// (its own, the session's, or Policy.Loopback; loopback only in each), made
// by the helper (or, in a session, by its server for each command) and
// passed to the host over a socket, where the Proxy serves it; the proxy
// variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, lower case too; NO_PROXY
// localhost) point the command to it, and the Proxy alone decides what is
// reached (proxy_linux.go). The namespace stays the boundary: the seccomp
// filter and Landlock allow TCP inside it, and a direct connection reaches
// nothing. The proxy ends with the command (its helper's end of the socket
// closes) and its refusals are written to the command's standard error.
//
// Known limits: under Landlock with a host that is not
// root the command sees itself as uid 0 of its user namespace (the host's
// user outside, without any capability: the helper needs to be that root
// to mount); under Landlock with the network open a
// Unix socket file (such as Docker's) in a readable folder can be
// connected to; as root, the root and TMPDIR must be on a file system with
// idmapped mounts (ext4, xfs, btrfs, tmpfs), or every command fails with
// 126 and says why; the parent-death signal follows the host thread that
// started the command (Go ends a thread only when a goroutine locked to it
// exits); a folder made inside a folder the host made setgid inherits the
// bit (the kernel's rule; Cmd.Fallback says so when the root or TMPDIR is
// setgid), and chmod of such a folder to a mode that keeps the bit (GNU
// chmod keeps it by default) fails. Tests: TestPolicies, TestContainment,
// the TestSandbox* of hardening_linux_test.go and modebits_linux_test.go
// (as root and, through TestSandboxUnprivileged, as nobody), and
// codetools' TestBashSandboxPolicies and TestBashContainsEveryProcess.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
)

// Mode says what a sandboxed command may write.
type Mode int

const (
	// Off runs commands without restrictions (they are still contained
	// where the kernel allows it).
	Off Mode = iota
	// WorkspaceWrite lets commands read the system folders
	// ([SystemFolders]), the root and Readable, and write only the root
	// and their private temporary folder.
	WorkspaceWrite
	// ReadOnly lets commands read what WorkspaceWrite does and write only
	// their private temporary folder.
	ReadOnly
)

// String returns the mode's name, as ParseMode reads it.
func (m Mode) String() string {
	switch m {
	case Off:
		return "off"
	case WorkspaceWrite:
		return "workspace-write"
	case ReadOnly:
		return "read-only"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ErrUnavailable is wrapped by the error of a sandbox that was asked for
// and cannot run here.
var ErrUnavailable = errors.New("sandbox unavailable")

// ErrBadPolicy is wrapped by the error for a policy that names an unknown
// mode or lacks a folder it needs.
var ErrBadPolicy = errors.New("bad sandbox policy")

// ParseMode reads "workspace-write", "read-only" or "off".
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "off", "none", "":
		return Off, nil
	case "workspace-write":
		return WorkspaceWrite, nil
	case "read-only":
		return ReadOnly, nil
	}
	return Off, fmt.Errorf("%w: mode %q: use workspace-write, read-only or off", ErrBadPolicy, s)
}

// Policy is what a sandboxed command may do.
type Policy struct {
	Mode Mode
	// Network lets the command open network connections (all or
	// nothing). It is ignored when Mode is Off.
	Network bool
	// Root is the working folder, writable under WorkspaceWrite and
	// readable under every mode.
	Root string
	// Tmp is the command's private temporary folder, always writable
	// (TMPDIR points to it). Required unless Mode is Off.
	Tmp string
	// Readable lists more folders or files the command may read (a
	// toolchain or module cache outside the system folders).
	Readable []string
	// Hidden lists files and folders inside the readable ones that the
	// command must not see (what a host's deny rules hide): each folder is
	// covered by an empty read-only tmpfs and each file by an empty
	// read-only one (/dev/null), so the command reads nothing of them,
	// whatever name it uses inside the tree. A path that does not exist is
	// skipped; a link is hidden where it leads. Under Landlock it needs the
	// helper's mount namespace: without user namespaces Command refuses
	// the policy (ErrUnavailable). A [Session] refuses a policy with
	// Hidden (ErrBadPolicy).
	Hidden []string
	// Loopback, when set with Network off, is a network namespace from
	// [NewLoopbackNetwork] the command joins instead of a new one of its
	// own: the commands given the same one reach each other on localhost
	// (a server started by one answers the next) and nothing else. Only
	// the Landlock backend joins one; bubblewrap refuses the policy.
	Loopback *os.File
	// Proxy, set with Network off, opens one way out of the closed
	// network: the command's network namespace (loopback only, as
	// without it) gets a listener on 127.0.0.1 that the host serves with
	// Proxy, and HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and their lower-case
	// forms point to it (NO_PROXY to localhost). Only the proxy decides
	// what is reached (internal/web's Proxy: the hosts of an allow-list).
	// It needs a network namespace: where none is given, Command fails
	// with ErrUnavailable rather than open the host's network.
	Proxy Proxy
}

// A Proxy serves the HTTP proxy of a command under a [Policy] with Proxy
// set (internal/web's Proxy is one).
type Proxy interface {
	// Serve serves the connections accepted on l, the listener in the
	// command's network namespace, until ctx ends (the command is gone);
	// then it closes l and every connection still open, and returns.
	// refused, when not nil, is called with the text of each refusal:
	// the sandbox writes it where the command's errors go.
	Serve(ctx context.Context, l net.Listener, refused func(msg string))
}

// SystemFolders are the folders every sandboxed command may read (those
// that exist): programs, libraries and configuration, never the home
// folders, /tmp, /var or /run (where sockets such as Docker's live).
var SystemFolders = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys"}

func (p Policy) check() error {
	if p.Proxy != nil && (p.Mode == Off || p.Network) {
		return fmt.Errorf("%w: a proxy opens a closed network: it needs a mode other than off and Network false", ErrBadPolicy)
	}
	if p.Mode == Off {
		return nil
	}
	if p.Mode != WorkspaceWrite && p.Mode != ReadOnly {
		return fmt.Errorf("%w: unknown mode %d", ErrBadPolicy, int(p.Mode))
	}
	if p.Root == "" || p.Tmp == "" {
		return fmt.Errorf("%w: the policy needs Root and Tmp folders", ErrBadPolicy)
	}
	return nil
}

// Spec is a command to run: argv, working folder and environment.
type Spec struct {
	Path string   // the program
	Args []string // its arguments, without argv[0]
	Dir  string
	Env  []string
	// TTY says that the standard streams will be a terminal (a pty's
	// slave, internal/jobs): the command gets it as its controlling
	// terminal and runs in the foreground process group of it, so that
	// Ctrl-C written to the terminal interrupts the command (and not
	// the helper). The caller sets the streams; the backend keeps the
	// session the terminal belongs to (bubblewrap without --new-session:
	// the terminal is the call's own, never the host's).
	TTY bool
}

// Backend runs commands under a policy. Implementations must make
// [Cmd.Kill] end every process of the command, or say with Cmd.Contained
// that they cannot.
type Backend interface {
	// Name names the backend in displays and errors ("bubblewrap",
	// "landlock", "namespace").
	Name() string
	// Command prepares spec to run under p. The caller sets the standard
	// streams, starts Cmd, waits for it and calls Kill to end it.
	Command(spec Spec, p Policy) (*Cmd, error)
}

// Cmd is a prepared command.
type Cmd struct {
	*exec.Cmd
	// Contained reports that Kill ends every process the command started
	// and that none is left once Wait returns.
	Contained bool
	// Backend names the backend that runs the command ("" when none).
	Backend string
	// Fallback is set when a backend had to run the command in a weaker
	// way than it meant to (for example without a PID namespace); the
	// text says why.
	Fallback string
	kill     func(*exec.Cmd) error
	served   *served    // run by a Session's server; nil otherwise
	proxy    *proxyLink // Policy.Proxy of a command with a sandbox of its own; nil otherwise
}

// Start starts the command (through the session's server for a command of
// a [Session]: then the embedded exec.Cmd only holds its streams).
func (c *Cmd) Start() error {
	if c.served != nil {
		return c.served.start(c.Cmd)
	}
	if c.proxy != nil {
		return c.proxy.start(c.Cmd)
	}
	return c.Cmd.Start()
}

// Wait waits for the command's end, as exec.Cmd's Wait; a command of a
// session that did not exit with 0 returns an [*ExitError].
func (c *Cmd) Wait() error {
	if c.served != nil {
		return c.served.wait()
	}
	err := c.Cmd.Wait()
	if c.proxy != nil {
		c.proxy.stop()
	}
	return err
}

// Exited is closed once a command of a [Session] has exited (nil for any
// other command: wait for its process).
func (c *Cmd) Exited() <-chan struct{} {
	if c.served != nil {
		return c.served.exited
	}
	return nil
}

// Kill ends the command and, when Contained, every process it started.
// Call it before Wait returns the first time, or after Start at any time.
func (c *Cmd) Kill() error {
	if c.served != nil {
		return c.served.kill()
	}
	if c.kill != nil {
		return c.kill(c.Cmd)
	}
	return c.Process.Kill()
}

// Available lists the backends that can enforce a policy here, strongest
// first.
func Available() []Backend {
	var out []Backend
	if b, err := NewBubblewrap(); err == nil {
		out = append(out, b)
	}
	if b, err := NewLandlock(); err == nil {
		out = append(out, b)
	}
	return out
}

// ByName returns the backend called name ("bubblewrap", "landlock", or
// "auto" for the strongest available), or an error wrapping
// ErrUnavailable that says why it cannot run here.
func ByName(name string) (Backend, error) {
	switch strings.ToLower(name) {
	case "", "auto":
		if b := Available(); len(b) > 0 {
			return b[0], nil
		}
		var errs []error
		if _, err := NewBubblewrap(); err != nil {
			errs = append(errs, err)
		}
		if _, err := NewLandlock(); err != nil {
			errs = append(errs, err)
		}
		return nil, fmt.Errorf("%w: no sandbox backend works here (install bubblewrap, or use a kernel with Landlock): %w", ErrUnavailable, errors.Join(errs...))
	case "bubblewrap", "bwrap":
		return NewBubblewrap()
	case "landlock":
		return NewLandlock()
	}
	return nil, fmt.Errorf("%w: unknown backend %q: use auto, bubblewrap or landlock", ErrBadPolicy, name)
}

// ErrSessionClosed is wrapped by the error of a command asked of a
// [Session] that is closed or whose server is gone.
var ErrSessionClosed = errors.New("the session's sandbox is closed")

// ErrServerLost (wrapping ErrSessionClosed) is the error of the commands
// a session's server was running when it died (killed, crashed): they
// are lost with it. The next command starts a new server, at most
// maxRestarts (3) times a minute; past that, commands fail with it too.
var ErrServerLost = fmt.Errorf("%w: its server died", ErrSessionClosed)
