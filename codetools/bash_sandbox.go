package codetools

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
	"github.com/llmtoolkit/llmtoolkit/internal/web"
)

// sandboxState is how bash runs its commands: the backend and policy of
// WithSandbox, or only containment.
type sandboxState struct {
	backend sandbox.Backend // nil: no sandbox (commands only contained)
	policy  sandbox.Policy
	tmp     string           // holds each call's temporary folder (and the spill files); "" without a sandbox
	session *sandbox.Session // WithSessionSandbox: the server every command runs through
	callTmp string           // where each call's temporary folder is made: tmp, or the session's
	missing string           // why the sandbox asked for could not run; "" otherwise
	allow   *web.Dialer      // SandboxPolicy.AllowHosts: what http_get and the proxy dial through; nil: none
}

// setupSandbox picks the backend of WithSandbox and makes the private
// temporary folder. It fails when WithSandboxRequired is set and the sandbox
// cannot run; otherwise an unavailable sandbox is logged and kept in
// missing, which bash's description and Display show.
func (c *CodeTools) setupSandbox() error {
	p := c.cfg.bash
	allow, err := c.setupAllowList()
	if err != nil {
		return err
	}
	c.sbx.allow = allow
	if p.sandbox.Mode == SandboxOff {
		if p.requireSandbox {
			return fmt.Errorf("codetools: %w: %w", ErrSandboxUnavailable, errNoSandboxAsked)
		}
		return nil
	}
	name := p.sandbox.Backend
	if p.session && !p.sandbox.Network && (name == "" || strings.EqualFold(name, "auto")) {
		name = "landlock" // the backend that joins a shared network
	}
	b, err := sandbox.ByName(name)
	if err != nil {
		if p.requireSandbox || errors.Is(err, sandbox.ErrBadPolicy) {
			return fmt.Errorf("codetools: WithSandbox: %w", err)
		}
		c.sbx = sandboxState{missing: err.Error(), allow: allow}
		slog.Warn("codetools: bash runs commands without the sandbox asked for", slog.String("reason", err.Error()))
		return nil
	}
	tmp, err := os.MkdirTemp("", "llmtoolkit-sandbox-*")
	if err != nil {
		return fmt.Errorf("codetools: sandbox temporary folder: %w", err)
	}
	c.sbx = sandboxState{backend: b, tmp: tmp, allow: allow, policy: sandbox.Policy{
		Mode: p.sandbox.Mode, Network: p.sandbox.Network, Root: c.dir, Readable: p.sandbox.Readable,
	}}
	if allow != nil {
		c.sbx.policy.Proxy = web.NewProxy(allow, 0, nil)
	}
	if p.spillDir == "" {
		c.cfg.bash.spillDir = tmp // next to the calls' folders, where no command sees them
	}
	if p.session && !p.sandbox.Network {
		if b.Name() != "bubblewrap" { // bubblewrap's server has a loopback network of its own
			lo, err := sandbox.NewLoopbackNetwork()
			if err != nil {
				os.RemoveAll(tmp)
				return fmt.Errorf("codetools: WithSessionSandbox: %w", err)
			}
			if _, err := b.Command(sandbox.Spec{Path: "/bin/true"}, sandbox.Policy{Mode: c.sbx.policy.Mode, Root: c.dir, Tmp: tmp, Loopback: lo}); err != nil {
				lo.Close()
				os.RemoveAll(tmp)
				return fmt.Errorf("codetools: WithSessionSandbox: %w", err)
			}
			c.sbx.policy.Loopback = lo
		}
		// One sandbox for the session: its server builds the namespaces
		// and the view once and forks every command, a terminal's too
		// (its pty's end passed as its standard streams).
		stmp := filepath.Join(tmp, "session")
		if err := os.Mkdir(stmp, 0o700); err != nil {
			c.closeSandbox()
			return fmt.Errorf("codetools: WithSessionSandbox: %w", err)
		}
		sp := c.sbx.policy
		sp.Tmp = stmp
		s, err := sandbox.NewSession(b, sp)
		if err != nil {
			c.closeSandbox()
			return fmt.Errorf("codetools: WithSessionSandbox: %w", err)
		}
		c.sbx.session, c.sbx.callTmp = s, stmp
	}
	return nil
}

// closeSandbox removes the private temporary folder and lets the shared
// network go.
func (c *CodeTools) closeSandbox() error {
	c.removals.close()
	if c.sbx.session != nil {
		_ = c.sbx.session.Close()
		c.sbx.session = nil
	}
	if c.sbx.policy.Loopback != nil {
		c.sbx.policy.Loopback.Close()
	}
	if c.sbx.tmp == "" {
		return nil
	}
	if err := os.RemoveAll(c.sbx.tmp); err != nil {
		return fmt.Errorf("codetools: sandbox temporary folder: %w", err)
	}
	return nil
}

// Sandbox says how bash runs its commands, as the "process" Display's
// Sandbox field does: the backend with its mode and network (and "as
// nobody" when the host is root), "none: REASON" when the sandbox asked
// for cannot run here, "none" without one.
func (c *CodeTools) Sandbox() string { return c.sandboxName() }

// sandboxName says how commands run, for the Display and the description.
func (c *CodeTools) sandboxName() string {
	switch {
	case c.sbx.backend != nil:
		net := "no network"
		switch {
		case c.sbx.policy.Network:
			net = "network"
		case c.sbx.policy.Loopback != nil || c.sbx.session != nil:
			net = "no network, shared loopback"
		}
		if c.sbx.allow != nil {
			net += ", hosts " + strings.Join(c.sbx.allow.Hosts.Entries(), " ") + " through a proxy"
		}
		if os.Geteuid() == 0 { // the backends drop to nobody
			net += ", as nobody"
		}
		return fmt.Sprintf("%s (%s, %s)", c.sbx.backend.Name(), c.sbx.policy.Mode, net)
	case c.sbx.missing != "":
		return "none: " + c.sbx.missing
	}
	return "none"
}

// bashCommand prepares the shell running command: in the sandbox (with a
// temporary folder of its own, which done removes once every process of
// the call is gone), or contained in a PID namespace, or (where neither
// works) as a plain process that the process guard's scan watches.
// With tty, the command's standard streams will be a terminal
// (internal/jobs).
func (c *CodeTools) bashCommand(command string, tty bool) (cmd *sandbox.Cmd, done func(), err error) {
	spec := sandbox.Spec{Path: c.shellPath(), Args: []string{"-c", command}, Dir: c.dir, TTY: tty}
	if c.sbx.backend != nil {
		parent := c.sbx.tmp
		if c.sbx.callTmp != "" {
			parent = c.sbx.callTmp
		}
		tmp, err := os.MkdirTemp(parent, "call-*")
		if err != nil {
			return nil, nil, fmt.Errorf("temporary folder: %w", err)
		}
		done = func() { c.removeCallTmp(tmp) }
		p := c.sbx.policy
		p.Tmp, spec.Env = tmp, ttyEnv(c.bashEnv(tmp), tty)
		var backend sandbox.Backend = c.sbx.backend
		if c.sbx.session != nil {
			backend = c.sbx.session
		}
		cmd, err := backend.Command(spec, p)
		if err != nil {
			done()
			return nil, nil, err
		}
		return cmd, done, nil
	}
	spec.Env = ttyEnv(c.bashEnv(""), tty)
	if b := sandbox.Contain(); b != nil && !c.cfg.bash.noContain {
		cmd, err := b.Command(spec, sandbox.Policy{})
		return cmd, func() {}, err
	}
	plain := exec.Command(spec.Path, spec.Args...)
	plain.Dir, plain.Env = spec.Dir, spec.Env
	return &sandbox.Cmd{Cmd: plain}, func() {}, nil
}

// removeCallTmp removes a call's temporary folder, once every process of
// the call is gone. Its rename into the private temporary folder, which no
// command sees (the spill files are there), takes what the call left out
// of every later command's reach at once; the removal itself then runs
// beside the next calls, and Close waits for it: on ext4 even an empty
// folder's took 150-300 us of each call (its inode's eviction, journal
// waits), and one the call filled takes as long as its files.
func (c *CodeTools) removeCallTmp(tmp string) {
	gone := filepath.Join(c.sbx.tmp, ".gone-"+filepath.Base(tmp))
	if err := os.Rename(tmp, gone); err != nil {
		removeTmp(tmp)
		return
	}
	if !c.removals.start(func() { removeTmp(gone) }) {
		removeTmp(gone)
	}
}

func removeTmp(dir string) {
	if err := os.RemoveAll(dir); err != nil {
		slog.Warn("codetools: bash: the call's temporary folder", slog.String("error", err.Error()))
	}
}

// tmpRemovals are the removals of calls' temporary folders still running
// (removeCallTmp).
type tmpRemovals struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// start runs remove on a goroutine of its own; false once closed (the
// caller removes).
func (r *tmpRemovals) start(remove func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer guard.Recover("codetools: bash: the call's temporary folder", nil, nil)
		remove()
	}()
	return true
}

// close waits for the removals started, and makes later ones run in
// their callers.
func (r *tmpRemovals) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.wg.Wait()
}

// ttyEnv names the terminal a command on a pseudo-terminal gets (the
// emulator of internal/jobs understands xterm's sequences).
func ttyEnv(env []string, tty bool) []string {
	if !tty {
		return env
	}
	return append(env, "TERM=xterm-256color")
}
