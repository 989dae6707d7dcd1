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
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	sc, done, err := c.bashCommand(command, false)
	if err != nil {
		pr.Close()
		pw.Close()
		return "", fmt.Errorf("bash: sandbox: %w", err)
	}
	defer done() // runs after the processes are reaped (the defers below run first)
	cmd := sc.Cmd
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe keeps the order of writes
	trap := proc.NewTrap("bash", toolPanic)
	trap.Hook = bashTestHook
	guard := proc.NewGuard(sc, pw, trap)

	began := time.Now()
	if err := sc.Start(); err != nil {
		pr.Close()
		pw.Close()
		return "", fmt.Errorf("bash: cannot start %s: %w", cmd.Path, err)
	}
	pw.Close()
	guard.Started()
	out := proc.NewOutput(func() (*os.File, error) { return c.spills.Create(c.cfg.bash.spillDir) }, c.cfg.bash.spillMaxBytes)
	defer func() { // also when something below panics: the file is tracked either way
		if path := out.Finish(); path != "" {
			c.spills.Keep(path, c.cfg.bash.spillMaxAge, c.cfg.bash.spillMaxFiles)
		}
	}()
	copied := make(chan struct{})
	trap.Go("output reader", func() {
		trap.Stage("copy")
		buf := make([]byte, 32*1024)
		_, _ = io.CopyBuffer(out, pr, buf)
	}, func() { close(copied) })
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
			pr.Close()
			<-copied
		}
	}()
	trap.Stage("run")

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case <-exited:
	case <-timer.C:
		timedOut = true
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
	left := guard.KillAll()
	waitErr := guard.Reap()
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
	text := out.Text()
	if left != "" {
		text += "\n\n[" + left + "]"
	}
	code := 0
	if waitErr != nil {
		code = proc.ExitCode(waitErr)
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayProcess, Payload: ProcessPayload{
		Command: command, ExitCode: code, Output: text, OutputBytes: out.Total(),
		DurationMS: elapsed.Milliseconds(), TimedOut: timedOut,
		OutputFile: out.Path(), OutputFileCut: out.Cut(), Sandbox: sandboxShown,
	}})
	if err := trap.Err(); err != nil {
		return "", err
	}
	prefix := text + "\n\n"
	if out.Total() == 0 && left == "" {
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
