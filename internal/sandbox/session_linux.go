//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// A Session is one sandbox made once and shared by many commands: the
// helper, started once in its stage "server", builds the namespaces and
// the mount tree, applies the policy (no_new_privs, Landlock, the seccomp
// filter, no bounding or inheritable capability) to its own thread, then
// forks each command it is asked for over a socketpair (SOCK_SEQPACKET:
// the command, its environment and folder in one message, its standard
// streams beside it as SCM_RIGHTS) and reports its exit status. A command
// inherits the policy from the thread that forks it, so the policy still
// holds per command; it runs as nobody (the host being root), as pid 2 of
// a PID namespace of its own whose init is a reaper (reaper_linux.go;
// killing the reaper ends every process the command started), in a
// process group and session of its own.
//
// The server dies with the host (a parent-death signal, and the socket's
// end: it exits at EOF), recovers its panics, and is the init of the
// session's PID namespace: its exit, at [Session.Close], kills every
// command still running. A server that dies otherwise (killed, crashed)
// loses its commands (their Wait fails with [ErrServerLost]); the next
// [Session.Command] starts a new one, logged, at most maxRestarts times
// within restartWindow.
type Session struct {
	backend  Backend
	policy   Policy
	root     string
	tmp      string
	readable []string
	bwrap    *Bubblewrap // the backend, when bubblewrap
	config   helperConfig

	mu       sync.Mutex
	cur      *hostServer // the server now serving; a dead one is replaced at the next command
	closed   bool
	restarts []time.Time // when servers were started again, within the last restartWindow
}

// hostServer is the host's side of one server of a session: a session
// starts one, and another when it dies (see [Session.Command]).
type hostServer struct {
	cmd      *exec.Cmd
	kill9    func(*exec.Cmd) error // the backend's kill of the server: bubblewrap's kills its init first
	stderr   *cappedBuffer
	conn     *net.UnixConn
	killOnce sync.Once

	mu      sync.Mutex
	next    uint64
	waiting map[uint64]*served
	gone    error // set once the server is gone
	done    chan struct{}
}

// Restarts of a session's dead server: at most maxRestarts within
// restartWindow, then commands fail with ErrServerLost.
const (
	maxRestarts   = 3
	restartWindow = time.Minute
)

// maxRequest bounds one request to the server: a command line (at most
// 128 KiB for one argument, the kernel's own bound) and its environment.
const maxRequest = 512 << 10

// request is one message to the server.
type request struct {
	Op   string   `json:"op"` // "start" or "kill"
	ID   uint64   `json:"id"`
	Path string   `json:"path,omitempty"`
	Argv []string `json:"argv,omitempty"`
	Env  []string `json:"env,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	TTY  bool     `json:"tty,omitempty"` // fd 0 is a terminal: the command's controlling one
}

// reply is one message from the server.
type reply struct {
	Op     string `json:"op"` // "ready", "started" or "exited"
	ID     uint64 `json:"id,omitempty"`
	Err    string `json:"err,omitempty"`
	Status int    `json:"status,omitempty"`
}

// NewSession starts the server of a sandbox shared by the commands run
// under p through [Session.Command], under Landlock or bubblewrap (whose
// own network namespace, loopback only, is then the session's: p.Loopback
// must be nil); with another backend it fails with ErrUnavailable.
func NewSession(b Backend, p Policy) (*Session, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if p.Mode == Off {
		return nil, fmt.Errorf("%w: a session's sandbox needs a mode other than off", ErrBadPolicy)
	}
	if len(p.Hidden) > 0 {
		return nil, fmt.Errorf("%w: a session's sandbox hides no paths (Policy.Hidden): run such commands with the backend's Command", ErrBadPolicy)
	}
	bw, isBwrap := b.(*Bubblewrap)
	if _, ok := b.(*Landlock); !ok && !isBwrap {
		return nil, fmt.Errorf("%w: the %s backend serves no session's sandbox", ErrUnavailable, b.Name())
	}
	if isBwrap && p.Loopback != nil {
		return nil, fmt.Errorf("%w: bubblewrap: %w (its session's network is its own, loopback only)", ErrBadPolicy, errNoSharedNetwork)
	}
	tmp, err := absClean(p.Tmp)
	if err != nil {
		return nil, fmt.Errorf("%w: temporary folder: %w", ErrBadPolicy, err)
	}
	root, err := absClean(p.Root)
	if err != nil {
		return nil, fmt.Errorf("%w: root: %w", ErrBadPolicy, err)
	}
	s := &Session{backend: b, policy: p, root: root, tmp: tmp, bwrap: bw}
	s.readable = readableOf(Spec{}, p, root)
	c := helperConfig{Stage: "server", Confine: true, Landlock: true, Readable: s.readable, Writable: []string{tmp},
		NoNetwork: !p.Network, IDMap: []string{root, tmp}}
	if p.Mode == WorkspaceWrite {
		c.Writable = append(c.Writable, root)
	}
	if p.Proxy != nil {
		// A listener per command, in the session's network namespace,
		// which holds only a loopback: it is the boundary.
		c.Proxy, c.NoNetwork, c.LoopUp = true, false, !isBwrap && p.Loopback == nil
	}
	s.config = c
	hs, err := s.startServer()
	if err != nil {
		return nil, err
	}
	s.cur = hs
	return s, nil
}

// startServer starts a server of the session and waits until it is ready.
func (s *Session) startServer() (*hostServer, error) {
	p, c := s.policy, s.config
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("session: socketpair: %w", err)
	}
	for _, fd := range fds {
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 2*maxRequest) != nil {
			_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 2*maxRequest)
		}
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "session-host"), os.NewFile(uintptr(fds[1]), "session-server")
	defer theirs.Close()
	spec := Spec{Path: "server", Dir: s.root, Env: []string{"PATH=/usr/bin:/bin"}}
	var cmd *Cmd
	if s.bwrap != nil {
		cmd, err = s.bwrap.command(spec, p, theirs)
	} else if p.Loopback != nil && !p.Network {
		c.NoNetwork = false // the shared namespace holds only a loopback: it is the boundary
		cmd, err = helperCommand(spec, c, false, s.backend.Name(), helperFiles{net: p.Loopback, sock: theirs})
	} else {
		cmd, err = helperCommand(spec, c, !p.Network, s.backend.Name(), helperFiles{sock: theirs})
	}
	if err != nil {
		mine.Close()
		return nil, err
	}
	if !cmd.Contained || cmd.Fallback != "" {
		mine.Close()
		return nil, fmt.Errorf("%w: a session's sandbox needs its namespaces: %s", ErrUnavailable, cmd.Fallback)
	}
	hs := &hostServer{waiting: map[uint64]*served{}, done: make(chan struct{})}
	hs.stderr = &cappedBuffer{max: 4 << 10}
	cmd.Stderr = hs.stderr
	if err := cmd.Cmd.Start(); err != nil {
		mine.Close()
		return nil, fmt.Errorf("session: start the server: %w", err)
	}
	hs.cmd, hs.kill9 = cmd.Cmd, cmd.kill
	conn, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		hs.kill()
		return nil, fmt.Errorf("session: %w", err)
	}
	hs.conn = conn.(*net.UnixConn)
	// The first message says the server is ready (or it is gone).
	buf := make([]byte, 4096)
	n, _, _, _, err := hs.conn.ReadMsgUnix(buf, nil)
	var r reply
	if err == nil && n > 0 {
		err = json.Unmarshal(buf[:n], &r)
	}
	if err != nil || n == 0 || r.Op != "ready" {
		hs.kill()
		why := strings.TrimSpace(hs.stderr.String())
		if why == "" && err != nil {
			why = err.Error()
		}
		return nil, fmt.Errorf("%w: the session's sandbox did not start: %s", ErrUnavailable, why)
	}
	go hs.read(s.backend.Name())
	return hs, nil
}

// server returns the session's server, starting a new one when the last
// died (at most maxRestarts within restartWindow).
func (s *Session) server() (*hostServer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrSessionClosed
	}
	hs := s.cur
	hs.mu.Lock()
	gone := hs.gone
	hs.mu.Unlock()
	if gone == nil {
		return hs, nil
	}
	now := time.Now()
	s.restarts = slices.DeleteFunc(s.restarts, func(t time.Time) bool { return now.Sub(t) >= restartWindow })
	if len(s.restarts) >= maxRestarts {
		return nil, fmt.Errorf("%w; it was started again %d times within %s and is not any more: %w", gone, len(s.restarts), restartWindow,
			errors.New("close the tools and make new ones"))
	}
	s.restarts = append(s.restarts, now)
	hs, err := s.startServer()
	if err != nil {
		slog.Warn("sandbox: the session's server died and a new one did not start",
			slog.String("backend", s.backend.Name()), slog.String("error", err.Error()))
		return nil, fmt.Errorf("%w; a new one did not start: %w", gone, err)
	}
	slog.Warn("sandbox: the session's server died; a new one serves the next commands (what ran in the old one was lost)",
		slog.String("backend", s.backend.Name()), slog.String("was", gone.Error()), slog.Int("restarts", len(s.restarts)))
	s.cur = hs
	return hs, nil
}

// Name names the session's backend.
func (s *Session) Name() string { return s.backend.Name() }

// Command prepares spec to run in the session's sandbox when p is the
// session's policy (its temporary folder, or one inside it; a terminal's
// command too: with spec.TTY its standard streams, a pty's end, are its
// controlling terminal); otherwise, a policy of its own, it gets a sandbox of
// its own from the session's backend (a new sandbox, joining the same
// loopback network).
func (s *Session) Command(spec Spec, p Policy) (*Cmd, error) {
	if !s.serves(spec, p) {
		return s.backend.Command(spec, p)
	}
	hs, err := s.server()
	if err != nil {
		return nil, err
	}
	argv := append([]string{spec.Path}, spec.Args...)
	ec := &exec.Cmd{Path: spec.Path, Args: argv, Dir: spec.Dir, Env: spec.Env}
	sv := &served{s: hs, tty: spec.TTY, exited: make(chan struct{}), started: make(chan startedReply, 1), proxy: p.Proxy}
	writable := []string{s.tmp}
	if s.policy.Mode == WorkspaceWrite {
		writable = append(writable, s.root)
	}
	return &Cmd{Cmd: ec, Contained: true, Backend: s.backend.Name(), served: sv, Fallback: setgidNote(writable)}, nil
}

// serves reports whether spec under p may run in the session's sandbox.
func (s *Session) serves(spec Spec, p Policy) bool {
	if p.Mode != s.policy.Mode || p.Network != s.policy.Network || p.Loopback != s.policy.Loopback ||
		(p.Proxy == nil) != (s.policy.Proxy == nil) {
		return false
	}
	root, err := absClean(p.Root)
	if err != nil || root != s.root {
		return false
	}
	tmp, err := absClean(p.Tmp)
	if err != nil || (tmp != s.tmp && !strings.HasPrefix(tmp, s.tmp+"/")) {
		return false
	}
	want := readableOf(spec, p, root)
	for _, r := range want {
		if !slices.ContainsFunc(s.readable, func(have string) bool { return r == have || strings.HasPrefix(r, have+"/") }) {
			return false
		}
	}
	return true
}

// Close ends the server and with it every command still running in the
// session's sandbox, and returns once they are gone.
func (s *Session) Close() error {
	s.mu.Lock()
	s.closed = true
	hs := s.cur
	s.mu.Unlock()
	hs.mu.Lock()
	if hs.gone == nil {
		hs.gone = ErrSessionClosed
	}
	hs.mu.Unlock()
	hs.kill()
	<-hs.done
	return nil
}

// kill kills the server (the init of the session's PID namespace: every
// command dies with it) and reaps it, once.
func (hs *hostServer) kill() {
	hs.killOnce.Do(func() {
		if hs.conn != nil {
			hs.conn.Close()
		}
		if hs.cmd != nil && hs.cmd.Process != nil {
			if hs.kill9 != nil {
				_ = hs.kill9(hs.cmd)
			} else {
				_ = hs.cmd.Process.Signal(syscall.SIGKILL)
			}
			_ = hs.cmd.Wait()
		}
	})
}

// read dispatches the server's replies until it is gone; then every
// command still waiting ends with ErrServerLost (ErrSessionClosed after
// Close), and what is left of the server is killed and reaped.
func (hs *hostServer) read(backend string) {
	defer close(hs.done)
	defer func() {
		hs.mu.Lock()
		died := hs.gone == nil
		if died {
			hs.gone = ErrServerLost
			if why := strings.TrimSpace(hs.stderr.String()); why != "" {
				hs.gone = fmt.Errorf("%w: %s", ErrServerLost, why)
			}
		}
		left := hs.waiting
		hs.waiting = map[uint64]*served{}
		gone := hs.gone
		hs.mu.Unlock()
		hs.kill()
		if died {
			slog.Warn("sandbox: the session's server died", slog.String("backend", backend),
				slog.Int("lost", len(left)), slog.String("error", gone.Error()))
		}
		for _, sv := range left {
			sv.finish(-1, gone)
		}
	}()
	defer guard.Recover("sandbox session: reader", nil, nil)
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := hs.conn.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			return
		}
		files := receivedFiles(oob[:oobn])
		var r reply
		if json.Unmarshal(buf[:n], &r) != nil {
			closeFiles(files)
			continue
		}
		hs.mu.Lock()
		sv := hs.waiting[r.ID]
		if r.Op == "exited" || (r.Op == "started" && r.Err != "") {
			delete(hs.waiting, r.ID)
		}
		hs.mu.Unlock()
		if sv == nil || r.Op != "started" {
			closeFiles(files)
		}
		if sv == nil {
			continue
		}
		switch r.Op {
		case "started":
			var lf *os.File
			if len(files) > 0 {
				lf = files[0]
				closeFiles(files[1:])
			}
			sv.started <- startedReply{r, lf}
		case "exited":
			sv.finish(r.Status, nil)
		}
	}
}

// send writes one request, with files as SCM_RIGHTS.
func (hs *hostServer) send(r request, files ...*os.File) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if len(b) > maxRequest {
		return fmt.Errorf("%w: the command and its environment take %d bytes, more than the %d a session's sandbox takes", ErrBadPolicy, len(b), maxRequest)
	}
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	if _, _, err := hs.conn.WriteMsgUnix(b, oob, nil); err != nil {
		return fmt.Errorf("%w: %w", ErrSessionClosed, err)
	}
	return nil
}

// served is a command run by a session's server.
type served struct {
	s         *hostServer
	tty       bool // Spec.TTY
	id        uint64
	started   chan startedReply
	exited    chan struct{}
	proxy     Proxy // the command's Policy.Proxy; nil: none
	once      sync.Once
	status    int
	err       error
	proxyDone chan struct{}  // closed once the command's proxy is done; nil: none
	copies    sync.WaitGroup // the copies of non-file streams
	closers   []io.Closer    // the host's ends, closed once the copies are done
}

// startedReply is a "started" reply with the command's proxy listener,
// when the session has a proxy.
type startedReply struct {
	reply
	listener *os.File
}

// closeFiles closes received descriptors nobody takes.
func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// serveProxy serves the command's proxy listener (nil: none) until the
// command has exited; refusals go to stderr when it is a file.
func (sv *served) serveProxy(lf *os.File, stderr io.Writer) {
	if lf == nil {
		return
	}
	if sv.proxy == nil {
		lf.Close()
		return
	}
	w := newRefusalWriter(stderr)
	ctx, cancel := context.WithCancel(context.Background())
	sv.proxyDone = make(chan struct{})
	go func() {
		defer guard.Recover("sandbox session: proxy", nil, nil)
		<-sv.exited
		cancel()
	}()
	go func() {
		defer close(sv.proxyDone)
		serveListener(ctx, sv.proxy, lf, w)
	}()
}

// finish records the command's end.
func (sv *served) finish(status int, err error) {
	sv.once.Do(func() {
		sv.status, sv.err = status, err
		close(sv.exited)
	})
}

// start sends the command with its streams and waits until it runs.
func (sv *served) start(ec *exec.Cmd) error {
	stdin, err := sv.input(ec.Stdin)
	if err != nil {
		return err
	}
	stdout, err := sv.output(ec.Stdout)
	if err != nil {
		return err
	}
	stderr := stdout
	if ec.Stderr != ec.Stdout {
		if stderr, err = sv.output(ec.Stderr); err != nil {
			return err
		}
	}
	s := sv.s
	s.mu.Lock()
	if s.gone != nil {
		s.mu.Unlock()
		sv.drop()
		return s.gone
	}
	s.next++
	sv.id = s.next
	s.waiting[sv.id] = sv
	s.mu.Unlock()
	err = s.send(request{Op: "start", ID: sv.id, Path: ec.Path, Argv: ec.Args, Env: ec.Env, Dir: ec.Dir, TTY: sv.tty}, stdin.f, stdout.f, stderr.f)
	stdin.close()
	stdout.close()
	stderr.close()
	if err != nil {
		s.mu.Lock()
		delete(s.waiting, sv.id)
		s.mu.Unlock()
		sv.drop()
		return err
	}
	select {
	case r := <-sv.started:
		if r.Err != "" {
			sv.drop()
			return errors.New(r.Err)
		}
		sv.serveProxy(r.listener, ec.Stderr)
		return nil
	case <-sv.exited: // the server went away
		sv.drop()
		return sv.err
	}
}

// drop ends the copies of a command that never ran.
func (sv *served) drop() {
	for _, c := range sv.closers {
		c.Close()
	}
	sv.closers = nil
}

// stream is the command's end of one standard stream.
type stream struct {
	f   *os.File
	own bool // made here: close it once sent
}

func (st stream) close() {
	if st.own {
		st.f.Close()
	}
}

// input returns the command's end of its standard input.
func (sv *served) input(r io.Reader) (stream, error) {
	switch r := r.(type) {
	case nil:
		f, err := os.Open(os.DevNull)
		return stream{f, true}, err
	case *os.File:
		return stream{r, false}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return stream{}, err
	}
	sv.copies.Add(1)
	sv.closers = append(sv.closers, pw)
	go func() {
		defer sv.copies.Done()
		defer guard.Recover("sandbox session: input copy", nil, nil)
		_, _ = io.Copy(pw, r)
		pw.Close()
	}()
	return stream{pr, true}, nil
}

// output returns the command's end of an output stream.
func (sv *served) output(w io.Writer) (stream, error) {
	switch w := w.(type) {
	case nil:
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		return stream{f, true}, err
	case *os.File:
		return stream{w, false}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return stream{}, err
	}
	sv.copies.Add(1)
	sv.closers = append(sv.closers, pr)
	go func() {
		defer sv.copies.Done()
		defer guard.Recover("sandbox session: output copy", nil, nil)
		_, _ = io.Copy(w, pr)
	}()
	return stream{pw, true}, nil
}

// wait returns once the command and every process it started are gone,
// and its output copied: nil, or an *ExitError with its status.
func (sv *served) wait() error {
	<-sv.exited
	if sv.proxyDone != nil {
		<-sv.proxyDone
	}
	sv.copies.Wait()
	for _, c := range sv.closers {
		c.Close()
	}
	if sv.err != nil {
		return sv.err
	}
	if sv.status != 0 {
		return &ExitError{Status: sv.status}
	}
	return nil
}

// kill asks the server to kill the command's namespace (its reaper, the
// init: every process of it).
func (sv *served) kill() error {
	select {
	case <-sv.exited:
		return os.ErrProcessDone
	default:
	}
	return sv.s.send(request{Op: "kill", ID: sv.id})
}

// ExitError is the error of a command of a session's sandbox that did not
// exit with 0.
type ExitError struct {
	// Status is the exit code, 128+N for a death by signal N.
	Status int
}

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Status) }

// ExitCode returns the exit code, 128+N for a death by signal N.
func (e *ExitError) ExitCode() int { return e.Status }

// cappedBuffer keeps the first max bytes written (the server's own
// failures).
type cappedBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// serveMain is the helper's stage "server": the view is built; it
// confines its own thread (from which every command is forked), says it
// is ready and serves requests until the host's end closes.
func serveMain(c helperConfig) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "llmtoolkit sandbox server: %v\n", err)
		return 126
	}
	// The server's own PID namespace, which its thread returns to after
	// each command's (reaper_linux.go); opened before Landlock applies.
	pidns, err := unix.Open("/proc/self/ns/pid", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(fmt.Errorf("its PID namespace: %w", err))
	}
	if err := unix.Setns(pidns, unix.CLONE_NEWPID); errors.Is(err, unix.EPERM) && !c.OwnPIDNS {
		// Under bubblewrap the server's user namespace is bwrap's second
		// one (made after /dev's devpts mount), which does not own bwrap's
		// PID namespace: the thread could not return to it after a
		// command's. The server runs again in a PID namespace of its own.
		_ = unix.Close(pidns)
		return serveNested(c)
	} else if err != nil {
		return fail(fmt.Errorf("its PID namespace: %w", err))
	}
	if err := confineServer(c); err != nil {
		return fail(err)
	}
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if c.SockFD <= 2 {
		return fail(errors.New("no socket to serve"))
	}
	unix.CloseOnExec(c.SockFD)
	if c.Parent {
		unix.CloseOnExec(parentFD)
	}
	// The socket stays blocking, read by the serving thread itself: through
	// the runtime's poller a request woke the poller's thread, which then
	// handed the locked goroutine to this one, a second wake-up (30-40 us
	// of each command's start at load 6).
	if err := unix.SetNonblock(c.SockFD, false); err != nil {
		return fail(fmt.Errorf("the session's socket: %w", err))
	}
	// The os package checks once, by forking a child, that pidfds work:
	// done now, so that it never takes pid 2 of a command's namespace,
	// the command's (which its reaper passes signals to).
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Release()
	}
	srv := &server{sock: c.SockFD, procs: map[uint64]servedProc{}, drop: c.Drop, proxy: c.Proxy,
		pidns: pidns, fork: newReaperFork(c.Drop)}
	if err := srv.reply(reply{Op: "ready"}); err != nil {
		return fail(err)
	}
	srv.loop()
	return 0
}

// serveNested runs the server again, as the init of a PID namespace its
// user namespace owns (see serveMain), and is that server's init: it
// forwards signals, reaps and exits with its status.
func serveNested(c helperConfig) int {
	c.OwnPIDNS = true
	cfg, err := json.Marshal(c)
	if err != nil {
		return 126
	}
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for _, fd := range []int{parentFD, c.SockFD} {
		if fd <= 2 || (fd == parentFD && !c.Parent) {
			continue
		}
		for len(files) <= fd {
			files = append(files, nil)
		}
		files[fd] = os.NewFile(uintptr(fd), "kept")
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs)
	proc, err := os.StartProcess("/proc/self/exe", []string{os.Args[0], string(cfg)}, &os.ProcAttr{Env: os.Environ(), Files: files,
		Sys: &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "llmtoolkit sandbox server: its own PID namespace: %v\n", err)
		return 126
	}
	_ = unix.Close(c.SockFD) // the host sees the socket's end when the nested server is gone
	go forwardSignals(sigs, proc.Pid)
	return reapUntil(proc.Pid)
}

// confineServer applies the policy to the server's thread: what the
// commands it forks inherit. It keeps, in its effective set only, the
// capabilities it needs to fork them (a PID namespace each, the change to
// nobody, their kill); with no bounding, inheritable or ambient
// capability, a command's exec leaves it none.
func confineServer(c helperConfig) error {
	if err := applyPolicy(c); err != nil {
		return err
	}
	if err := dropBounding(); err != nil {
		return err
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	keep := uint64(1)<<unix.CAP_SYS_ADMIN | 1<<unix.CAP_SETUID | 1<<unix.CAP_SETGID | 1<<unix.CAP_KILL
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var have [2]unix.CapUserData
	if err := unix.Capget(&hdr, &have[0]); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	keep &= uint64(have[0].Permitted) | uint64(have[1].Permitted)<<32 // under bubblewrap: those it was given
	data := [2]unix.CapUserData{{Effective: uint32(keep), Permitted: uint32(keep)}, {Effective: uint32(keep >> 32), Permitted: uint32(keep >> 32)}}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	return nil
}

// server is the state of the helper's stage "server".
type server struct {
	sock  int // the session's socket, blocking (see serveMain); replies are written from any goroutine
	drop  bool
	proxy bool        // a proxy listener per command, passed with its "started" reply
	pidns int         // the server's own PID namespace
	fork  *reaperFork // used by the serving thread alone
	mu    sync.Mutex
	procs map[uint64]servedProc
}

// servedProc is a command the server runs: its process, pid 2 of its
// namespace, and the pidfd of that namespace's init, the reaper.
type servedProc struct {
	p      *os.Process
	reaper int
}

func (srv *server) reply(r reply, fds ...int) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	for {
		err = unix.Sendmsg(srv.sock, b, oob, nil, unix.MSG_NOSIGNAL)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// loop serves requests on the locked, confined thread until EOF.
func (srv *server) loop() {
	buf := make([]byte, maxRequest+1)
	oob := make([]byte, unix.CmsgSpace(3*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(srv.sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || (n == 0 && oobn == 0) {
			return
		}
		files := receivedFiles(oob[:oobn])
		srv.handle(buf[:n], files)
	}
}

// receivedFiles returns the descriptors passed with a request.
func receivedFiles(oob []byte) []*os.File {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []*os.File
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			unix.CloseOnExec(fd)
			out = append(out, os.NewFile(uintptr(fd), "stream"))
		}
	}
	return out
}

// handle runs one request; a panic fails it, never the server.
func (srv *server) handle(msg []byte, files []*os.File) {
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var r request
	defer guard.Recover("sandbox server", nil, func(err error) {
		_ = srv.reply(reply{Op: "started", ID: r.ID, Err: err.Error()})
	})
	if err := json.Unmarshal(msg, &r); err != nil {
		return
	}
	switch r.Op {
	case "kill":
		srv.mu.Lock()
		if sp, ok := srv.procs[r.ID]; ok {
			killReaper(sp.reaper) // the namespace ends, the command with it
		}
		srv.mu.Unlock()
	case "start":
		lfd := -1
		if srv.proxy {
			fd, port, err := proxyListen()
			if err != nil {
				_ = srv.reply(reply{Op: "started", ID: r.ID, Err: err.Error()})
				return
			}
			defer unix.Close(fd)
			lfd, r.Env = fd, proxyEnv(r.Env, port)
		}
		sp, err := srv.start(r, files)
		if err != nil {
			_ = srv.reply(reply{Op: "started", ID: r.ID, Err: err.Error()})
			return
		}
		srv.mu.Lock()
		srv.procs[r.ID] = sp
		srv.mu.Unlock()
		if lfd >= 0 {
			_ = srv.reply(reply{Op: "started", ID: r.ID}, lfd)
		} else {
			_ = srv.reply(reply{Op: "started", ID: r.ID})
		}
		go srv.wait(r.ID, sp)
	}
}

// start forks the command from this (confined) thread, as nobody when
// the host is root, in a session of its own: first the reaper, the init of
// a new PID namespace (reaper_linux.go), then the command, its pid 2.
func (srv *server) start(r request, files []*os.File) (servedProc, error) {
	if len(files) != 3 {
		return servedProc{}, fmt.Errorf("sandbox server: %d streams passed, 3 needed", len(files))
	}
	path := r.Path
	if !filepath.IsAbs(path) {
		found, err := exec.LookPath(path)
		if err != nil {
			return servedProc{}, err
		}
		path = found
	}
	// No Pdeathsig: the child, whose parent is outside its namespace
	// (getppid 0), would take the host for dead; it dies with its reaper,
	// which dies with the server.
	sys := &syscall.SysProcAttr{Setsid: true}
	if r.TTY {
		// The terminal is its session's controlling one, whose foreground
		// group it leads: Ctrl-C reaches it (it is no init).
		sys.Setctty, sys.Ctty = true, 0
	}
	if srv.drop {
		sys.Credential = &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}
	}
	env := slices.DeleteFunc(slices.Clone(r.Env), func(kv string) bool { return strings.HasPrefix(kv, helperEnv+"=") })
	if err := unix.Unshare(unix.CLONE_NEWPID); err != nil {
		return servedProc{}, fmt.Errorf("sandbox server: a PID namespace: %w", err)
	}
	reaper, err := forkReaper(srv.fork)
	var p *os.Process
	if err == nil {
		p, err = os.StartProcess(path, r.Argv, &os.ProcAttr{Dir: r.Dir, Env: env, Files: files, Sys: sys})
	}
	if e := unix.Setns(srv.pidns, unix.CLONE_NEWPID); e != nil {
		// Every later fork would land in this command's namespace.
		fmt.Fprintf(os.Stderr, "llmtoolkit sandbox server: back to its PID namespace: %v\n", e)
		os.Exit(126)
	}
	if err != nil {
		if reaper >= 0 {
			killReaper(reaper)
			waitReaper(reaper)
		}
		return servedProc{}, err
	}
	return servedProc{p: p, reaper: reaper}, nil
}

// wait reports the command's end (128+N for a death by signal N) once
// every process of its namespace is gone: the command reaped, its reaper
// killed (ending what the command left) and reaped.
func (srv *server) wait(id uint64, sp servedProc) {
	defer guard.Recover("sandbox server: wait", nil, nil)
	st, err := sp.p.Wait()
	status := -1
	if err == nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = 128 + int(ws.Signal())
		} else {
			status = st.ExitCode()
		}
	}
	srv.mu.Lock()
	delete(srv.procs, id)
	killReaper(sp.reaper)
	srv.mu.Unlock()
	waitReaper(sp.reaper)
	_ = srv.reply(reply{Op: "exited", ID: id, Status: status})
}
