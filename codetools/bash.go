package codetools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/calltask"
	"github.com/llmtoolkit/llmtoolkit/internal/proc"
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
	props := map[string]any{
		"command": map[string]any{"type": "string", "minLength": 1, "description": "The command line to run, as given to bash -c. Chain commands with && or ;."},
		"timeout": map[string]any{"type": "integer", "minimum": 1, "maximum": maxSec, "description": fmt.Sprintf("Seconds before the command is killed. Default: %d, at most %d.", defSec, maxSec)},
	}
	if c.cfg.jobs.background {
		props["run_in_background"] = map[string]any{"type": "boolean", "description": "Run the command as a background job (a dev server, a watcher, a long build): the answer comes at once with the job's id and its first output; read the rest with job_output, stop it with job_kill. The timeout does not apply."}
	}
	return makeSpec("bash",
		fmt.Sprintf("Run a shell command with bash -c in the working directory and return its output (stdout and stderr merged, in the order written). "+
			"Standard input is empty, so a command that waits for input ends instead of hanging: pass non-interactive flags (-y, --yes, --no-pager). "+
			c.bashScope()+" "+
			"Only the last %d lines or %d KiB of output are shown, with the path of a file holding the output "+
			"(at most %s: beyond that the file keeps its beginning and its end, and the answer says so; it is removed after a while"+c.spillReach()+"). "+
			"A non-zero exit code is reported as an error with the output. "+
			"Use bash to build, test, run programs and use git; prefer read_file, grep, glob and the edit tools for reading, searching and changing files."+
			c.bashJobsNote(),
			defSec, maxSec, proc.MaxLines, proc.MaxBytes/1024, textutil.HumanSize(c.cfg.bash.spillMaxBytes)),
		map[string]any{
			"type":                 "object",
			"properties":           props,
			"required":             []any{"command"},
			"additionalProperties": false,
		}, llmtoolkit.Annotations{Destructive: true}, c.bash)
}

// bashScope tells the model what is killed and, in a sandbox, what the
// command may do: what holds here, no more.
func (c *CodeTools) bashScope() string {
	scope := proc.KillScope
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
	if c.sbx.backend != nil {
		scope += " $TMPDIR is new for each call and removed after it. Setting a setuid or setgid bit fails (EPERM)."
	}
	switch {
	case c.sbx.backend != nil && !c.sbx.policy.Network && (c.sbx.policy.Loopback != nil || c.sbx.session != nil):
		scope += " It has no network but a loopback (localhost) shared by every command of these tools: a server a background job starts is reached by later commands."
	case c.sbx.backend != nil && !c.sbx.policy.Network:
		scope += " It has no network."
	}
	if c.sbx.backend != nil && c.sbx.allow != nil {
		scope += " Only these hosts are reached, through the HTTP proxy that HTTP_PROXY and HTTPS_PROXY name (curl, pip, npm and go use it on their own): " +
			strings.Join(c.sbx.allow.Hosts.Entries(), ", ") + " (a bare name: ports 80 and 443); every other host and every IP address is refused (403)."
	}
	return scope
}

// spillReach says, in a sandbox whose spill files lie out of the commands'
// reach (the default), that the file is for the user.
func (c *CodeTools) spillReach() string {
	if c.sbx.tmp != "" && c.cfg.bash.spillDir == c.sbx.tmp {
		return "; it is kept for the user: commands cannot read it"
	}
	return ""
}

// shellPath returns the configured shell, else bash, else sh. Bash is
// looked for in PATH once, at the first call that finds it: a look-up per
// call stat'ed each folder of PATH before it (34-38 us of a session call
// at load 8).
func (c *CodeTools) shellPath() string {
	if c.cfg.bash.shell != "" {
		return c.cfg.bash.shell
	}
	if p := c.bashPath.Load(); p != nil {
		return *p
	}
	if p, err := exec.LookPath("bash"); err == nil {
		c.bashPath.Store(&p)
		return p
	}
	return "sh"
}

func (c *CodeTools) bash(ctx context.Context, args map[string]any) (string, error) {
	if c.spills.IsClosed() {
		return "", fmt.Errorf("bash: %w", errToolsClosed)
	}
	command := stringArg(args, "command", "")
	timeout := c.cfg.bash.bashTimeout
	if s := intArg(args, "timeout", 0); s > 0 {
		timeout = min(time.Duration(s)*time.Second, c.cfg.bash.bashMaxTimeout)
	}
	if c.cfg.jobs.background && boolArg(args, "run_in_background", false) {
		switch {
		case calltask.In(ctx): // an MCP task is the background: run to the end in it
			after := c.watchBash(ctx)
			out, err := c.bashInTask(ctx, command)
			if err != nil {
				return out, err
			}
			return out + after(ctx), nil
		case calltask.Offered(ctx):
			return "", calltask.ErrRunAsTask
		}
		return c.bashBackground(ctx, command)
	}
	// The files the command changes are told to the language servers, and
	// their diagnostics follow its output (WithLanguageServers).
	after := c.watchBash(ctx)
	var (
		out string
		err error
	)
	if c.cfg.jobs.autoAfter > 0 {
		out, err = c.bashAuto(ctx, command, timeout)
	} else {
		out, err = c.bashOnce(ctx, command, timeout)
	}
	diags := after(ctx)
	if err != nil {
		return out, err
	}
	return out + diags, nil
}

// bashOnce runs command to its end (or its timeout) and returns its
// output.
func (c *CodeTools) bashOnce(ctx context.Context, command string, timeout time.Duration) (string, error) {
	r, err := c.runOnce(ctx, command, timeout, false)
	if err != nil {
		return "", err
	}
	text := r.out.Text()
	if r.left != "" {
		text += "\n\n[" + r.left + "]"
	}
	r.show(ctx, c, command, text)
	if err := r.trap.Err(); err != nil {
		return "", err
	}
	prefix := text + "\n\n"
	if r.out.Total() == 0 && r.left == "" {
		prefix = ""
	}
	switch {
	case r.timedOut:
		return "", &commandError{fmt.Sprintf("%sCommand timed out after %d seconds", prefix, int(timeout.Round(time.Second)/time.Second))}
	case ctx.Err() != nil:
		return "", fmt.Errorf("%sCommand cancelled: %w", prefix, ctx.Err())
	case r.waitErr != nil && r.code == -1:
		return "", fmt.Errorf("%sbash: %w", prefix, r.waitErr)
	case r.code != 0:
		return "", &commandError{fmt.Sprintf("%sCommand exited with code %d", prefix, r.code)}
	}
	return text, nil
}

// commandRun is what one command run to its end left: its output (stdout
// and stderr merged in out, or stdout in out and stderr in errOut), how it
// ended and the processes that could not be killed.
type commandRun struct {
	out, errOut *proc.Output
	code        int // the exit code, -1 without one
	waitErr     error
	timedOut    bool
	left        string // a note on processes that outlived the kill
	elapsed     time.Duration
	sandbox     string // where it ran, for the Display
	trap        *proc.Trap
}

// show tells the call's listeners of the command (a process Display) whose
// output, as shown to the model, is text, and returns the payload.
func (r *commandRun) show(ctx context.Context, c *CodeTools, command, text string) ProcessPayload {
	total := r.out.Total()
	if r.errOut != nil {
		total += r.errOut.Total()
	}
	p := ProcessPayload{
		Command: command, ExitCode: r.code, Output: text, OutputBytes: total,
		DurationMS: r.elapsed.Milliseconds(), TimedOut: r.timedOut,
		OutputFile: r.out.Path(), OutputFileCut: r.out.Cut(), Sandbox: r.sandbox,
	}
	if p.OutputFile == "" && r.errOut != nil {
		p.OutputFile, p.OutputFileCut = r.errOut.Path(), r.errOut.Cut()
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayProcess, Payload: p})
	return p
}

// runOnce runs command with bash -c to its end, its timeout or ctx's end,
// then kills whatever it left running. split keeps stderr apart (errOut),
// each stream capped and spilled as bash's output is. Its error is the
// failure to start the command; a panic in its goroutines is r.trap.Err().
func (c *CodeTools) runOnce(ctx context.Context, command string, timeout time.Duration, split bool) (*commandRun, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("bash: %w", err)
	}
	var er, ew *os.File
	if split {
		if er, ew, err = os.Pipe(); err != nil {
			pr.Close()
			pw.Close()
			return nil, fmt.Errorf("bash: %w", err)
		}
	}
	closeErr := func() {
		if er != nil {
			er.Close()
			ew.Close()
		}
	}
	sc, done, err := c.bashCommand(command, false)
	if err != nil {
		pr.Close()
		pw.Close()
		closeErr()
		return nil, fmt.Errorf("bash: sandbox: %w", err)
	}
	defer done() // runs after the processes are reaped (the defers below run first)
	cmd := sc.Cmd
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe keeps the order of writes
	if split {
		cmd.Stderr = ew
	}
	trap := proc.NewTrap("bash", toolPanic)
	trap.Hook = bashTestHook
	guard := proc.NewGuard(sc, pw, trap)

	began := time.Now()
	if err := sc.Start(); err != nil {
		pr.Close()
		pw.Close()
		closeErr()
		return nil, fmt.Errorf("bash: cannot start %s: %w", cmd.Path, err)
	}
	pw.Close()
	if ew != nil {
		ew.Close()
	}
	guard.Started()
	spill := func() (*os.File, error) { return c.spills.Create(c.cfg.bash.spillDir) }
	r := &commandRun{out: proc.NewOutput(spill, c.cfg.bash.spillMaxBytes), trap: trap}
	if split {
		r.errOut = proc.NewOutput(spill, c.cfg.bash.spillMaxBytes)
	}
	defer func() { // also when something below panics: the files are tracked either way
		for _, o := range []*proc.Output{r.out, r.errOut} {
			if o == nil {
				continue
			}
			if path := o.Finish(); path != "" {
				c.spills.Keep(path, c.cfg.bash.spillMaxAge, c.cfg.bash.spillMaxFiles)
			}
		}
	}()
	copied := make(chan struct{})
	copyFrom := func(from *os.File, to *proc.Output) func() {
		return func() {
			trap.Stage("copy")
			buf := make([]byte, 32*1024)
			_, _ = io.CopyBuffer(to, from, buf)
		}
	}
	if split {
		errCopied := make(chan struct{})
		trap.Go("stderr reader", copyFrom(er, r.errOut), func() { close(errCopied) })
		outCopied := make(chan struct{})
		trap.Go("output reader", copyFrom(pr, r.out), func() { close(outCopied) })
		go func() { <-errCopied; <-outCopied; close(copied) }()
	} else {
		trap.Go("output reader", copyFrom(pr, r.out), func() { close(copied) })
	}
	closeReaders := func() {
		pr.Close()
		if er != nil {
			er.Close()
		}
	}
	exited := make(chan struct{})
	trap.Go("exit waiter", func() {
		trap.Stage("wait")
		guard.WaitExited()
	}, func() { close(exited) })
	settled := false
	defer func() {
		if !settled { // something below panicked: still kill, reap and drain
			guard.KillAll()
			<-exited
			_ = guard.Reap()
			closeReaders()
			<-copied
		}
	}()
	trap.Stage("run")

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-exited:
	case <-timer.C:
		r.timedOut = true
		guard.KillAll()
		<-exited
	case <-ctx.Done():
		guard.KillAll()
		<-exited
	case <-trap.Failed(): // the call fails: do not let the command run on
		guard.KillAll()
		<-exited
	}
	// Background processes the command left must not outlive the call (and
	// would hold the pipe open).
	r.left = guard.KillAll()
	r.waitErr = guard.Reap()
	select {
	case <-copied:
	case <-time.After(2 * time.Second): // a process escaped and holds the pipe
	}
	closeReaders()
	<-copied
	settled = true
	r.elapsed = time.Since(began)

	r.sandbox = c.sandboxName()
	if sc.Fallback != "" {
		r.sandbox += "; " + sc.Fallback
	}
	if r.waitErr != nil {
		r.code = proc.ExitCode(r.waitErr)
	}
	return r, nil
}

// bashTestHook, when set by a test, is called at the start of each
// goroutine bash runs, with its name ("copy", "wait", "watch"), and by the
// call itself once they run ("run") (see proc.Trap's Hook).
var bashTestHook func(stage string)

// Defaults and bounds of bash's spill files, for the options.
const (
	defaultSpillMaxBytes = proc.DefaultSpillMaxBytes
	minSpillMaxBytes     = proc.MinSpillMaxBytes
	defaultSpillMaxFiles = proc.DefaultSpillMaxFiles
)

// errToolsClosed is returned by a call made after [CodeTools.Close].
var errToolsClosed = fmt.Errorf("codetools: the tools are closed: %w", os.ErrClosed)

// closeSpills removes bash's spill files, for [CodeTools.Close].
func (c *CodeTools) closeSpills() error {
	if err := c.spills.Close(); err != nil {
		return fmt.Errorf("codetools: %w", err)
	}
	return nil
}

// containedHere reports whether commands run as the init of their own PID
// namespace on this machine.
func containedHere() bool {
	ok, _ := sandbox.Contains()
	return ok
}
