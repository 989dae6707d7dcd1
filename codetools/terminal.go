package codetools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/calltask"
	"github.com/llmtoolkit/llmtoolkit/internal/jobs"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// Defaults of the terminal tools, as Codex's: exec_command waits 10 s,
// write_stdin 250 ms; answers hold at most 10,000 tokens (about 4 bytes
// each).
const (
	execDefaultYield   = 10 * time.Second
	stdinDefaultYield  = 250 * time.Millisecond
	termMaxYield       = 300 * time.Second
	termDefaultTokens  = 10_000
	termMaxTokens      = 100_000
	termBytesPerToken  = 4
	termCols, termRows = 120, 40
)

// terminalSpecs lists the terminal tools, when on.
func (c *CodeTools) terminalSpecs() []toolSpec {
	if !c.cfg.jobs.terminals {
		return nil
	}
	return []toolSpec{c.execCommandSpec(), c.writeStdinSpec()}
}

func (c *CodeTools) execCommandSpec() toolSpec {
	return makeSpec("exec_command",
		"Run a command with bash -c in the working directory and return what it printed within yield_time_ms. "+
			"If it is still running then, the answer gives a session ID: pass it to write_stdin to type into it (an answer to a prompt, a line for a REPL, Ctrl-C as \"\\u0003\") or to read what it printed since. "+
			fmt.Sprintf("With tty: true the command runs on a terminal of %dx%d (for REPLs, prompts and full-screen programs such as less or vi, whose screen is returned as text); otherwise its output is a pipe. ", termCols, termRows)+
			c.bashScope()+" "+c.jobEnds()+
			fmt.Sprintf(" A session that is neither read nor written for %s is ended.", c.jobs.Limits().IdleTimeout),
		map[string]any{
			"type": "object",
			"properties": map[string]any{
				"cmd":               map[string]any{"type": "string", "minLength": 1, "description": "The command line, as given to bash -c."},
				"workdir":           map[string]any{"type": "string", "description": "A folder to run it in, relative to the working directory (default: the working directory)."},
				"tty":               map[string]any{"type": "boolean", "description": "Run the command on a pseudo-terminal (default false: plain pipes, stdin still writable)."},
				"yield_time_ms":     map[string]any{"type": "integer", "minimum": 0, "maximum": int(termMaxYield / time.Millisecond), "description": fmt.Sprintf("How long to wait for output before answering (default %d).", execDefaultYield.Milliseconds())},
				"max_output_tokens": map[string]any{"type": "integer", "minimum": 1, "maximum": termMaxTokens, "description": fmt.Sprintf("Most tokens of output to return (default %d); the middle of longer output is cut.", termDefaultTokens)},
			},
			"required":             []any{"cmd"},
			"additionalProperties": false,
		}, llmtoolkit.Annotations{Destructive: true}, c.execCommand)
}

func (c *CodeTools) writeStdinSpec() toolSpec {
	return makeSpec("write_stdin",
		"Write characters to a running exec_command session and return what it printed within yield_time_ms. "+
			"Empty chars only reads. Keys: \"\\n\" Enter, \"\\u0003\" Ctrl-C, \"\\u0004\" Ctrl-D, \"\\u001b\" Escape, \"\\u001b[A\" Up.",
		map[string]any{
			"type": "object",
			"properties": map[string]any{
				"session_id":        map[string]any{"type": "integer", "minimum": 1, "description": "The session ID exec_command gave."},
				"chars":             map[string]any{"type": "string", "description": "What to type (may be empty)."},
				"yield_time_ms":     map[string]any{"type": "integer", "minimum": 0, "maximum": int(termMaxYield / time.Millisecond), "description": fmt.Sprintf("How long to wait for output before answering (default %d).", stdinDefaultYield.Milliseconds())},
				"max_output_tokens": map[string]any{"type": "integer", "minimum": 1, "maximum": termMaxTokens, "description": fmt.Sprintf("Most tokens of output to return (default %d).", termDefaultTokens)},
			},
			"required":             []any{"session_id"},
			"additionalProperties": false,
		}, llmtoolkit.Annotations{Destructive: true}, c.writeStdin)
}

// yieldArg reads yield_time_ms.
func yieldArg(args map[string]any, def time.Duration) time.Duration {
	ms := intArg(args, "yield_time_ms", -1)
	if ms < 0 {
		return def
	}
	return min(time.Duration(ms)*time.Millisecond, termMaxYield)
}

func (c *CodeTools) execCommand(ctx context.Context, args map[string]any) (string, error) {
	if c.spills.IsClosed() {
		return "", fmt.Errorf("exec_command: %w", errToolsClosed)
	}
	command := stringArg(args, "cmd", "")
	if wd := stringArg(args, "workdir", ""); wd != "" {
		real, err := c.canonical(ctx, "workdir", wd, true) // the folder the fact declares
		if err != nil {
			return "", fmt.Errorf("exec_command: %w", err)
		}
		if real = filepath.ToSlash(real); real != "." {
			command = "cd -- " + shellQuote(real) + " && " + command
		}
	}
	tty := boolArg(args, "tty", false)
	if !tty { // a terminal is typed into: it stays a session, whatever the client
		switch {
		case calltask.In(ctx): // an MCP task is the session: run to the end in it
			return c.execInTask(ctx, command, args)
		case calltask.Offered(ctx):
			return "", calltask.ErrRunAsTask
		}
	}
	began := time.Now()
	j, fallback, err := c.startJob(ctx, command, tty, termCols, termRows, true)
	if err != nil {
		return "", fmt.Errorf("exec_command: %w", err)
	}
	ch := j.Read(ctx, jobs.ReadOptions{Wait: yieldArg(args, execDefaultYield), UntilExit: true})
	if ch.Info.State == jobs.Running {
		c.reportJobEnd(ctx, j, nil)
	}
	return c.terminalAnswer(ctx, JobStarted, j, ch, began, args, fallback), nil
}

// execInTask runs exec_command's command in the MCP task its call runs
// in: to its end (its lifetime bounds it), with an empty input (nobody
// holds a session ID to type into it), answered as exec_command answers
// an ended command; the task's cancellation (ctx) kills it.
func (c *CodeTools) execInTask(ctx context.Context, command string, args map[string]any) (string, error) {
	began := time.Now()
	j, fallback, err := c.startJob(ctx, command, false, termCols, termRows, false)
	if err != nil {
		return "", fmt.Errorf("exec_command: %w", err)
	}
	ch := j.Read(ctx, jobs.ReadOptions{Wait: c.jobs.Limits().MaxLifetime + time.Minute, UntilExit: true})
	if ch.Info.State != jobs.Running {
		return c.terminalAnswer(ctx, JobStarted, j, ch, began, args, fallback), nil
	}
	j.Kill("cancelled") // the task was cancelled
	<-j.Done()
	rest := j.Read(context.WithoutCancel(ctx), jobs.ReadOptions{})
	if rest.Dropped > 0 { // what was read is before what fell out of memory
		rest.Dropped += ch.Dropped + int64(len(ch.Data))
	} else {
		rest.Data, rest.Dropped = append(ch.Data, rest.Data...), ch.Dropped
	}
	ch = rest
	return "", fmt.Errorf("exec_command: %s\n\nCommand cancelled: %w", c.terminalAnswer(ctx, JobStarted, j, ch, began, args, fallback), ctx.Err())
}

func (c *CodeTools) writeStdin(ctx context.Context, args map[string]any) (string, error) {
	j, err := c.jobArg(ctx, "write_stdin", "session_id", args)
	if err != nil {
		return "", err
	}
	began := time.Now()
	event := JobRead
	if chars := stringArg(args, "chars", ""); chars != "" {
		event = JobWritten
		if err := j.Write([]byte(chars)); err != nil {
			ch := j.Read(ctx, jobs.ReadOptions{})
			return "", fmt.Errorf("write_stdin: %w\n\n%s", err, c.terminalAnswer(ctx, JobRead, j, ch, began, args, ""))
		}
	}
	ch := j.Read(ctx, jobs.ReadOptions{Wait: yieldArg(args, stdinDefaultYield), UntilExit: true})
	return c.terminalAnswer(ctx, event, j, ch, began, args, ""), nil
}

// terminalAnswer is Codex's answer shape: the wall time, the process's
// state (its exit code, or the session ID while it runs), the output. A
// full-screen program's answer is its screen. It shows the call as event
// ([JobPayload]).
func (c *CodeTools) terminalAnswer(ctx context.Context, event string, j *jobs.Job, ch jobs.Chunk, began time.Time, args map[string]any, fallback string) string {
	in := ch.Info
	var b strings.Builder
	fmt.Fprintf(&b, "Wall time: %.3f seconds\n", time.Since(began).Seconds())
	switch in.State {
	case jobs.Running:
		fmt.Fprintf(&b, "Process running with session ID %d\n", in.ID)
	case jobs.Killed:
		fmt.Fprintf(&b, "Process killed (%s)\n", in.Reason)
	default:
		fmt.Fprintf(&b, "Process exited with code %d\n", in.ExitCode)
	}
	limit := intArg(args, "max_output_tokens", termDefaultTokens) * termBytesPerToken
	if screen, full := j.Screen(); full {
		shown := cutMiddle(screen, limit)
		c.showJob(ctx, event, ch, shown, true, fallback)
		fmt.Fprintf(&b, "Screen (a full-screen program, %dx%d):\n%s", termCols, termRows, shown)
		return b.String()
	}
	text := string(ch.Data)
	if in.TTY {
		text = jobs.Plain(ch.Data)
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if ch.Dropped > 0 {
		where := ""
		if in.Log != "" {
			where = "; all of it is in " + in.Log
		}
		fmt.Fprintf(&b, "[%s of earlier output not kept in memory%s]\n", textutil.HumanSize(ch.Dropped), where)
	}
	shown := cutMiddle(text, limit)
	c.showJob(ctx, event, ch, shown, false, fallback)
	fmt.Fprintf(&b, "Output:\n%s", shown)
	return b.String()
}

// cutMiddle keeps the first and last halves of at most limit bytes of s,
// saying what it cut.
func cutMiddle(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	head := textutil.CutUTF8(s, limit/2)
	tail := s[len(s)-(limit-len(head)):]
	for len(tail) > 0 && !isRuneStart(tail[0]) {
		tail = tail[1:]
	}
	return fmt.Sprintf("%s\n[... %s cut ...]\n%s", head, textutil.HumanSize(int64(len(s)-len(head)-len(tail))), tail)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
