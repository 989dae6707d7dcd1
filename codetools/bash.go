package codetools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime/debug"
	"sync"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// ErrCommandFailed is wrapped by bash's error for a command that exited
// with a non-zero code or timed out; the error's text is the output
// followed by the reason.
var ErrCommandFailed = errors.New("command failed")

// commandError is bash's error: its text is what the model sees.
type commandError struct{ msg string }

func (e *commandError) Error() string { return e.msg }
func (e *commandError) Unwrap() error { return ErrCommandFailed }

func (c *CodeTools) bashSpec() toolSpec {
	maxSec := int(c.cfg.bash.bashMaxTimeout / time.Second)
	defSec := int(c.cfg.bash.bashTimeout / time.Second)
	return makeSpec("bash",
		fmt.Sprintf("Run a shell command with bash -c in the working directory and return its output (stdout and stderr merged, in the order written). "+
			"Standard input is empty, so a command that waits for input ends instead of hanging: pass non-interactive flags (-y, --yes, --no-pager). "+
			c.bashScope()+" "+
			"Only the last %d lines or %d KiB of output are shown, with the path of a file holding the output "+
			"(at most %s: beyond that the file keeps its beginning and its end, and the answer says so; it is removed after a while). "+
			"A non-zero exit code is reported as an error with the output. "+
			"Use bash to build, test, run programs and use git; prefer read_file, grep, glob and the edit tools for reading, searching and changing files.",
			defSec, maxSec, bashMaxLines, bashMaxBytes/1024, textutil.HumanSize(c.cfg.bash.spillMaxBytes)),
		map[string]any{
			"type": "object",
			"properties": map[string]any{
				"command": map[string]any{"type": "string", "minLength": 1, "description": "The command line to run, as given to bash -c. Chain commands with && or ;."},
				"timeout": map[string]any{"type": "integer", "minimum": 1, "maximum": maxSec, "description": fmt.Sprintf("Seconds before the command is killed. Default: %d, at most %d.", defSec, maxSec)},
			},
			"required":             []any{"command"},
			"additionalProperties": false,
		}, llmtoolkit.Annotations{Destructive: true}, c.bash)
}

// bashScope tells the model what is killed and, in a sandbox, what the
// command may do: what holds here, no more.
func (c *CodeTools) bashScope() string {
	scope := bashKillScope
	if c.sbx.backend != nil || (!c.cfg.bash.noContain && containedHere()) {
		scope = "The command runs in its own process namespace and is killed after timeout seconds (default %d, at most %d); " +
			"when it ends or is killed, every process it started ends with it, background and detached ones included."
	}
	switch p := c.sbx.policy; {
	case c.sbx.backend != nil && p.Mode == SandboxWorkspaceWrite:
		scope += " It runs in a sandbox: it can read the system folders and the working directory, and write only the working directory and $TMPDIR."
	case c.sbx.backend != nil:
		scope += " It runs in a read-only sandbox: it can read the system folders and the working directory, and write only $TMPDIR."
	}
	if c.sbx.backend != nil && !c.sbx.policy.Network {
		scope += " It has no network."
	}
	return scope
}

// shellPath returns the configured shell, else bash, else sh.
func (c *CodeTools) shellPath() string {
	if c.cfg.bash.shell != "" {
		return c.cfg.bash.shell
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "sh"
}

func (c *CodeTools) bash(ctx context.Context, args map[string]any) (string, error) {
	if c.spills.isClosed() {
		return "", fmt.Errorf("bash: %w", errToolsClosed)
	}
	command := stringArg(args, "command", "")
	timeout := c.cfg.bash.bashTimeout
	if s := intArg(args, "timeout", 0); s > 0 {
		timeout = min(time.Duration(s)*time.Second, c.cfg.bash.bashMaxTimeout)
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	sc, err := c.bashCommand(command)
	if err != nil {
		pr.Close()
		pw.Close()
		return "", fmt.Errorf("bash: sandbox: %w", err)
	}
	cmd := sc.Cmd
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe keeps the order of writes
	trap := newPanicTrap()
	var guard callGuard
	if sc.Contained {
		guard = newContainedGuard(sc)
	} else {
		guard = newProcGuard(cmd, pw, trap)
	}

	began := time.Now()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return "", fmt.Errorf("bash: cannot start %s: %w", cmd.Path, err)
	}
	pw.Close()
	guard.started()
	out := &outputCapture{
		create: func() (*os.File, error) { return c.spills.create(c.cfg.bash.spillDir) },
		limit:  c.cfg.bash.spillMaxBytes,
	}
	defer func() { // also when something below panics: the file is tracked either way
		if path := out.finish(); path != "" {
			c.spills.keep(path, c.cfg.bash.spillMaxAge, c.cfg.bash.spillMaxFiles)
		}
	}()
	copied := make(chan struct{})
	trap.goRecover("output reader", func() {
		if h := bashTestHook; h != nil {
			h("copy")
		}
		buf := make([]byte, 32*1024)
		_, _ = io.CopyBuffer(out, pr, buf)
	}, func() { close(copied) })
	exited := make(chan struct{})
	trap.goRecover("exit waiter", func() {
		if h := bashTestHook; h != nil {
			h("wait")
		}
		guard.waitExited()
	}, func() { close(exited) })
	settled := false
	defer func() {
		if !settled { // something below panicked: still kill, reap and drain
			guard.killAll()
			<-exited
			_ = guard.reap()
			pr.Close()
			<-copied
		}
	}()
	if h := bashTestHook; h != nil {
		h("run")
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case <-exited:
	case <-timer.C:
		timedOut = true
		guard.killAll()
		<-exited
	case <-ctx.Done():
		guard.killAll()
		<-exited
	case <-trap.failed: // the call fails: do not let the command run on
		guard.killAll()
		<-exited
	}
	// Background processes the command left must not outlive the call (and
	// would hold the pipe open).
	left := guard.killAll()
	waitErr := guard.reap()
	select {
	case <-copied:
	case <-time.After(2 * time.Second): // a process escaped and holds the pipe
	}
	pr.Close()
	<-copied
	settled = true
	elapsed := time.Since(began)

	sandboxShown := c.sandboxName()
	if sc.Fallback != "" {
		sandboxShown += "; " + sc.Fallback
	}
	text := out.text()
	if left != "" {
		text += "\n\n[" + left + "]"
	}
	code := 0
	if waitErr != nil {
		code = exitCode(waitErr)
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: KindProcess, Payload: ProcessPayload{
		Command: command, ExitCode: code, Output: text, OutputBytes: out.total,
		DurationMS: elapsed.Milliseconds(), DurationMs: elapsed.Milliseconds(), TimedOut: timedOut,
		OutputFile: out.path, OutputFileCut: out.cut, Sandbox: sandboxShown,
	}})
	if err := trap.error(); err != nil {
		return "", err
	}
	prefix := text + "\n\n"
	if out.total == 0 && left == "" {
		prefix = ""
	}
	switch {
	case timedOut:
		return "", &commandError{fmt.Sprintf("%sCommand timed out after %d seconds", prefix, int(timeout.Round(time.Second)/time.Second))}
	case ctx.Err() != nil:
		return "", fmt.Errorf("%sCommand cancelled: %w", prefix, ctx.Err())
	case waitErr != nil && code == -1:
		return "", fmt.Errorf("%sbash: %w", prefix, waitErr)
	case code != 0:
		return "", &commandError{fmt.Sprintf("%sCommand exited with code %d", prefix, code)}
	}
	return text, nil
}

// callGuard ends the processes of one bash call: a contained one (the
// kernel does it) or, as a fallback, the process guard's scan.
type callGuard interface {
	started()        // the command runs
	waitExited()     // returns when the command has exited
	killAll() string // kills every process of the call; a note on failure
	reap() error     // the command's exit status (exec's error)
}

// bashTestHook, when set by a test, is called at the start of each
// goroutine bash runs, with its name ("copy", "wait", "watch"), and by the
// call itself once they run ("run").
var bashTestHook func(stage string)

// panicTrap turns panics in the goroutines of one bash call into the
// call's error, so that they never crash the host.
type panicTrap struct {
	failed chan struct{} // closed at the first panic
	mu     sync.Mutex
	err    error // the first panic
}

func newPanicTrap() *panicTrap { return &panicTrap{failed: make(chan struct{})} }

// goRecover runs f on a new goroutine, then finally (if not nil), even
// when f panics; the panic is logged with its stack and kept as the error.
func (p *panicTrap) goRecover(name string, f, finally func()) {
	go func() {
		if finally != nil {
			defer finally()
		}
		defer func() {
			if v := recover(); v != nil {
				pe := &llmtoolkit.PanicError{Value: v, Stack: debug.Stack()}
				slog.Error("codetools: bash goroutine panicked",
					slog.String("goroutine", name), slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
				p.mu.Lock()
				if p.err == nil {
					p.err = fmt.Errorf("bash: %s: %w", name, pe)
					close(p.failed)
				}
				p.mu.Unlock()
			}
		}()
		f()
	}()
}

// error returns the first panic, nil without one.
func (p *panicTrap) error() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// containedHere reports whether commands run as the init of their own PID
// namespace on this machine.
func containedHere() bool {
	ok, _ := sandbox.Contains()
	return ok
}
