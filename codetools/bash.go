package codetools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
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
	maxSec := int(c.cfg.part2.bashMaxTimeout / time.Second)
	defSec := int(c.cfg.part2.bashTimeout / time.Second)
	return makeSpec("bash",
		fmt.Sprintf("Run a shell command with bash -c in the working directory and return its output (stdout and stderr merged, in the order written). "+
			"Standard input is empty, so a command that waits for input ends instead of hanging: pass non-interactive flags (-y, --yes, --no-pager). "+
			"The command is killed with all its child processes after timeout seconds (default %d, at most %d); background processes it leaves are killed when it ends. "+
			"Only the last %d lines or %d KiB of output are shown, with the path of a file holding the output "+
			"(at most %s: when longer, its first and last parts, the answer says so; kept for a limited time). "+
			"A non-zero exit code is reported as an error with the output. "+
			"Use bash to build, test, run programs and use git; prefer read_file, grep, glob and the edit tools for reading, searching and changing files.",
			defSec, maxSec, bashMaxLines, bashMaxBytes/1024, textutil.HumanSize(c.cfg.part2.spillMaxBytes)),
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

// shellPath returns the configured shell, else bash, else sh.
func (c *CodeTools) shellPath() string {
	if c.cfg.part2.shell != "" {
		return c.cfg.part2.shell
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "sh"
}

// bashEnv returns the commands' environment.
func (c *CodeTools) bashEnv() []string {
	var env []string
	if c.cfg.part2.bashCleanEnv {
		for _, k := range []string{"PATH", "HOME"} {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	} else {
		env = os.Environ()
	}
	return append(env, c.cfg.part2.bashEnv...)
}

func (c *CodeTools) bash(ctx context.Context, args map[string]any) (string, error) {
	if c.spills.isClosed() {
		return "", fmt.Errorf("bash: %w", errToolsClosed)
	}
	command := stringArg(args, "command", "")
	timeout := c.cfg.part2.bashTimeout
	if s := intArg(args, "timeout", 0); s > 0 {
		timeout = min(time.Duration(s)*time.Second, c.cfg.part2.bashMaxTimeout)
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	cmd := exec.Command(c.shellPath(), "-c", command)
	cmd.Dir = c.dir
	cmd.Env = c.bashEnv()
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe keeps the order of writes
	startInOwnGroup(cmd)

	began := time.Now()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return "", fmt.Errorf("bash: cannot start %s: %w", cmd.Path, err)
	}
	pw.Close()
	out := &outputCapture{
		create: func() (*os.File, error) { return c.spills.create(c.cfg.part2.spillDir) },
		limit:  c.cfg.part2.spillMaxBytes,
	}
	defer func() { // also when something below panics: the file is tracked either way
		if path := out.finish(); path != "" {
			c.spills.keep(path, c.cfg.part2.spillMaxAge, c.cfg.part2.spillMaxFiles)
		}
	}()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 32*1024)
		_, _ = io.CopyBuffer(out, pr, buf)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var (
		waitErr  error
		timedOut bool
	)
	select {
	case waitErr = <-waited:
	case <-timer.C:
		timedOut = true
		killGroup(cmd)
		waitErr = <-waited
	case <-ctx.Done():
		killGroup(cmd)
		waitErr = <-waited
	}
	// Background processes the command left would hold the pipe open.
	killGroup(cmd)
	select {
	case <-copied:
	case <-time.After(2 * time.Second): // a process escaped the group (setsid)
	}
	pr.Close()
	<-copied
	elapsed := time.Since(began)

	text := out.text()
	code := 0
	if waitErr != nil {
		code = exitCode(waitErr)
	}
	payload := map[string]any{
		"command": command, "exitCode": code, "output": text, "durationMs": elapsed.Milliseconds(),
	}
	if out.path != "" {
		payload["outputFile"], payload["outputFileCut"] = out.path, out.cut
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "process", Payload: payload})
	prefix := text + "\n\n"
	if out.total == 0 {
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
