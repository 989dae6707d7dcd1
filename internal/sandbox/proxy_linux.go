//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// The way out of a closed network (Policy.Proxy): the helper (or, in a
// session, its server, once per command) opens a TCP listener on
// 127.0.0.1 inside the command's network namespace, which holds only a
// loopback, and passes it to the host over a socket (SCM_RIGHTS); the
// host accepts on it and serves it with the policy's Proxy, which alone
// decides what is reached. The command is told the listener's port
// through the proxy variables. The helper keeps its end of the socket
// open until it exits, so the host knows when the command is gone even if
// nobody waits for it; Wait ends the proxy too. Refusals are written, one
// line each and at most maxRefusalLines, to the command's standard error
// when it is a file (a pipe or a terminal).

// proxyVars are the variables that point a command to its proxy.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

// noProxyVars are the variables that keep localhost off the proxy (a
// server the command started answers it directly).
var noProxyVars = []string{"NO_PROXY", "no_proxy"}

// proxyEnv returns env without any proxy variable, then the variables
// pointing to the proxy on port.
func proxyEnv(env []string, port int) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(proxyVars, name) || slices.Contains(noProxyVars, name)
	})
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	for _, v := range proxyVars {
		out = append(out, v+"="+url)
	}
	for _, v := range noProxyVars {
		out = append(out, v+"=localhost,127.0.0.1,::1")
	}
	return out
}

// proxyListen opens the proxy's listener on 127.0.0.1 in this network
// namespace and returns its descriptor and port.
func proxyListen() (int, int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("proxy listener: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("proxy listener: bind 127.0.0.1: %w", err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("proxy listener: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("proxy listener: %w", err)
	}
	return fd, sa.(*unix.SockaddrInet4).Port, nil
}

// helperProxy is the helper's part: it opens the listener, sends it to the
// host over sock, keeps sock open (close-on-exec) until it exits, and
// points the command's environment to the proxy.
func helperProxy(sock int) error {
	fd, port, err := proxyListen()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Sendmsg(sock, []byte(strconv.Itoa(port)), unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("proxy listener: pass it to the host: %w", err)
	}
	unix.CloseOnExec(sock)
	for _, kv := range proxyEnv(nil, port) {
		name, value, _ := strings.Cut(kv, "=")
		if err := os.Setenv(name, value); err != nil {
			return err
		}
	}
	return nil
}

// maxRefusalLines bounds the refusals written to one command's errors.
const maxRefusalLines = 32

// refusalWriter writes a command's proxy refusals to its standard error,
// one line each, at most maxRefusalLines, then one line saying so.
type refusalWriter struct {
	mu sync.Mutex
	f  *os.File // a duplicate of the command's stderr; nil: none (a non-file writer)
	n  int
}

// newRefusalWriter duplicates stderr when it is a file.
func newRefusalWriter(stderr any) *refusalWriter {
	w := &refusalWriter{}
	if f, ok := stderr.(*os.File); ok && f != nil {
		if fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0); err == nil {
			w.f = os.NewFile(uintptr(fd), "proxy-refusals")
		}
	}
	return w
}

func (w *refusalWriter) refused(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return
	}
	w.n++
	switch {
	case w.n <= maxRefusalLines:
		_, _ = w.f.WriteString(strings.ReplaceAll(msg, "\n", " ") + "\n")
	case w.n == maxRefusalLines+1:
		_, _ = fmt.Fprintf(w.f, "llmtoolkit sandbox proxy: more refusals, not shown (at most %d a command)\n", maxRefusalLines)
	}
}

func (w *refusalWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

// serveListener serves the proxy on the listener file lf until ctx ends,
// writing refusals through w, and closes w when done.
func serveListener(ctx context.Context, p Proxy, lf *os.File, w *refusalWriter) {
	defer w.close()
	l, err := net.FileListener(lf)
	lf.Close()
	if err != nil {
		w.refused("llmtoolkit sandbox proxy: " + err.Error())
		return
	}
	done := guard.Go("sandbox proxy", func() error { p.Serve(ctx, l, w.refused); return nil }, nil)
	<-done
	l.Close()
}

// proxyLink is the host's side of one command's proxy (a command with a
// sandbox of its own).
type proxyLink struct {
	p      Proxy
	mine   *os.File // the host's end of the socketpair
	theirs *os.File // the helper's end, closed once it started
	conn   *net.UnixConn
	cancel context.CancelFunc
	done   chan struct{}
}

// newProxyLink makes the socketpair of a command under a policy with a
// Proxy; theirs goes to the helper.
func newProxyLink(p Proxy) (*proxyLink, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("proxy: socketpair: %w", err)
	}
	return &proxyLink{p: p, mine: os.NewFile(uintptr(fds[0]), "proxy-host"), theirs: os.NewFile(uintptr(fds[1]), "proxy-helper")}, nil
}

// start starts cmd, then serves its proxy until the helper is gone or
// stop is called.
func (pl *proxyLink) start(cmd *exec.Cmd) error {
	w := newRefusalWriter(cmd.Stderr)
	err := cmd.Start()
	pl.theirs.Close()
	if err != nil {
		pl.mine.Close()
		w.close()
		return err
	}
	c, err := net.FileConn(pl.mine)
	pl.mine.Close()
	if err != nil {
		// The listener cannot be received: nobody would answer it.
		w.close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("proxy: %w", err)
	}
	pl.conn = c.(*net.UnixConn)
	ctx, cancel := context.WithCancel(context.Background())
	pl.cancel, pl.done = cancel, make(chan struct{})
	go pl.run(ctx, w)
	return nil
}

// run receives the listener, serves it, and ends the proxy at the
// helper's exit (its end of the socket closes) or at stop.
func (pl *proxyLink) run(ctx context.Context, w *refusalWriter) {
	defer close(pl.done)
	defer pl.cancel()
	defer guard.Recover("sandbox proxy: link", nil, nil)
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := pl.conn.ReadMsgUnix(buf, oob)
	files := receivedFiles(oob[:max(oobn, 0)])
	if err != nil || n == 0 || len(files) != 1 {
		for _, f := range files {
			f.Close()
		}
		w.close()
		return
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		serveListener(ctx, pl.p, files[0], w)
	}()
	for { // until the helper's end closes (or stop closes ours)
		if n, _, _, _, err := pl.conn.ReadMsgUnix(buf, nil); err != nil || n == 0 {
			break
		}
	}
	pl.cancel()
	<-served
}

// stop ends the proxy (the command was waited for) and returns once it is
// done.
func (pl *proxyLink) stop() {
	if pl.conn == nil {
		return
	}
	pl.conn.Close()
	<-pl.done
}
