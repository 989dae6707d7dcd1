package codetools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/jobs"
	"github.com/llmtoolkit/llmtoolkit/internal/proc"
)

// NativeBash is the llmtoolkit.Tool.Native of bash as [WithBashSession]
// makes it (and [WithModelTools] for Claude): package provider declares it
// to Anthropic as the built-in bash_20250124, whose input is {"command"}
// or {"restart": true}.
const NativeBash = "anthropic/bash_20250124"

// WithBashSession makes bash Anthropic's bash tool (bash_20250124): one
// persistent shell per session (the call's owner, as background jobs
// have: its tenant and conversation, run and agent), so the working
// directory, variables and functions a command sets carry to the next;
// {"restart": true} ends the shell and starts a fresh one. Each command
// runs in that shell with an empty standard input, on the engine of the
// background jobs ([WithBackgroundJobs]: the sandbox, containment, a
// lifetime, the process kill at Close), its output capped and spilled as
// bash's is. A command still running at bash's timeout ([WithBashTimeout])
// is killed with its shell (the answer says so; the next command starts a
// fresh one), and so is a shell whose command exits it. The shell's
// standard error is a pipe of its own: the answer shows what a command
// wrote to its standard output, then, after a line "stderr:", what it
// wrote to its standard error, each in the order written, capped and
// spilled on its own (a background process's output is the running
// command's). The tool's arguments are command and restart (no timeout,
// no run_in_background).
func WithBashSession() Option { return func(c *config) { c.bash.persistent = true } }

func (c *CodeTools) bashSessionSpec() toolSpec {
	defSec := int(c.cfg.bash.bashTimeout / time.Second)
	s := makeSpec("bash",
		fmt.Sprintf("Run a command in a persistent bash session: the working directory, environment variables and functions a command sets stay for the next one. "+
			"Standard input is empty: pass non-interactive flags (-y, --yes, --no-pager). "+
			"A command still running after %d seconds is killed with the session, and the next command starts a new one; so does {\"restart\": true}. "+
			"The answer shows stdout, then stderr after a line \"stderr:\"; of each only the last %d lines or %d KiB are shown, with the path of a file holding it"+c.spillReach()+". "+
			"A non-zero exit code is reported as an error with the output. "+
			"Use bash to build, test, run programs and use git; prefer the file tools for reading, searching and changing files.",
			defSec, proc.MaxLines, proc.MaxBytes/1024),
		schemaObject(map[string]any{
			"command": map[string]any{"type": "string", "minLength": 1, "description": "The command to run in the session."},
			"restart": map[string]any{"type": "boolean", "description": "Restart the session: a fresh shell in the working directory."},
		}),
		llmtoolkit.Annotations{Destructive: true}, c.bashInSession)
	s.tool.Native = NativeBash
	return s
}

// bashOrSessionSpec is bash, or its persistent form (WithBashSession).
func (c *CodeTools) bashOrSessionSpec() toolSpec {
	if c.cfg.bash.persistent {
		return c.bashSessionSpec()
	}
	return c.bashSpec()
}

// bashSessions are the persistent shells of WithBashSession, one per owner.
type bashSessions struct {
	mu    sync.Mutex
	by    map[string]*bashSession
	ended map[string]string // why an owner's last shell ended, told once
}

// bashSession is one persistent shell: a job reading commands on its
// standard input. One command runs at a time.
type bashSession struct {
	mu     sync.Mutex // held while a command runs
	job    *jobs.Job
	marker string // ends each command's output: marker, a space, the exit code
	seq    int    // the commands run, numbering their markers on stderr
}

// maxSessionTail bounds what is held back while looking for the marker.
const maxSessionTail = 256

func (c *CodeTools) bashInSession(ctx context.Context, args map[string]any) (string, error) {
	if c.spills.IsClosed() {
		return "", fmt.Errorf("bash: %w", errToolsClosed)
	}
	owner := jobOwner(ctx)
	command := stringArg(args, "command", "")
	if boolArg(args, "restart", false) {
		c.endSession(owner, "")
		if _, err := c.session(ctx, owner); err != nil {
			return "", fmt.Errorf("bash: restart: %w", err)
		}
		if command == "" {
			return "tool has been restarted.", nil
		}
	}
	if command == "" {
		return "", errors.New("bash: give a command to run, or restart: true")
	}
	note := c.sessionNote(owner)
	s, err := c.session(ctx, owner)
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	after := c.watchBash(ctx)
	out, err := c.runInSession(ctx, owner, s, command)
	if note != "" {
		out = note + "\n" + out
	}
	diags := after(ctx)
	if err != nil {
		var ce *commandError
		if errors.As(err, &ce) && note != "" {
			ce.msg = note + "\n" + ce.msg
		}
		return out, err
	}
	return out + diags, nil
}

// session returns owner's shell, starting it when there is none.
func (c *CodeTools) session(ctx context.Context, owner string) (*bashSession, error) {
	ss := &c.sessions
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s := ss.by[owner]; s != nil {
		select {
		case <-s.job.Done():
			delete(ss.by, owner)
		default:
			return s, nil
		}
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	s := &bashSession{marker: "__llmtoolkit_done_" + hex.EncodeToString(b[:]) + "__"}
	j, _, err := c.startJobSpec(ctx, jobs.Spec{Command: "exec bash --noprofile --norc", Stdin: true, SplitStderr: true})
	if err != nil {
		return nil, err
	}
	s.job = j
	// The shell outlives the call that started it: its end has an audit
	// row too, its output without the markers.
	marks := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(s.marker) + ` -?\d+\n?`)
	c.reportJobEnd(ctx, j, func(tail []byte) []byte { return marks.ReplaceAll(tail, nil) })
	if ss.by == nil {
		ss.by = map[string]*bashSession{}
	}
	ss.by[owner] = s
	return s, nil
}

// endSession kills owner's shell, if any; why, when not empty, is told with
// the next command's answer.
func (c *CodeTools) endSession(owner, why string) {
	ss := &c.sessions
	ss.mu.Lock()
	s := ss.by[owner]
	delete(ss.by, owner)
	if why != "" {
		if ss.ended == nil {
			ss.ended = map[string]string{}
		}
		ss.ended[owner] = why
	}
	ss.mu.Unlock()
	if s != nil {
		s.job.Kill("the bash session ended")
		<-s.job.Done()
	}
}

// sessionNote tells, once, why owner's previous shell ended: the state it
// held is gone.
func (c *CodeTools) sessionNote(owner string) string {
	ss := &c.sessions
	ss.mu.Lock()
	defer ss.mu.Unlock()
	why := ss.ended[owner]
	delete(ss.ended, owner)
	if s := ss.by[owner]; why == "" && s != nil {
		select {
		case <-s.job.Done():
			why = "it " + s.job.Info().Reason
		default:
		}
	}
	if why == "" {
		return ""
	}
	return "[A new bash session: the previous one ended (" + why + "); its working directory and variables are gone.]"
}

// ansiCQuote writes s as a bash ANSI-C quoted string ($'...'), which holds
// any bytes on one line.
func ansiCQuote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\\' || ch == '\'':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch < 0x20 || ch == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", ch)
		default:
			b.WriteByte(ch)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// sessionErrGrace bounds the wait for a command's end marker on standard
// error once its exit code came on the output: a command may have sent the
// shell's own standard error elsewhere (exec 2>/dev/null).
const sessionErrGrace = 2 * time.Second

// sessionStream is one stream of a command run in a session: what has
// come since the command began, held back while its end marker may be in
// it, passed on to out.
type sessionStream struct {
	out  *proc.Output
	done *regexp.Regexp
	held []byte
	over bool // its marker came
}

// take adds p; it reports whether the marker came, and returns its
// submatches (the exit code, on the output).
func (st *sessionStream) take(p []byte) [][]byte {
	if st.over {
		return nil // what came after the marker is a background process's, dropped
	}
	st.held = append(st.held, p...)
	if m := st.done.FindSubmatchIndex(st.held); m != nil {
		_, _ = st.out.Write(st.held[:m[0]])
		subs := make([][]byte, 0, len(m)/2)
		for i := 0; i+1 < len(m); i += 2 {
			subs = append(subs, st.held[m[i]:m[i+1]])
		}
		st.held, st.over = nil, true
		return subs
	}
	if n := len(st.held) - maxSessionTail; n > 0 {
		_, _ = st.out.Write(st.held[:n])
		st.held = append(st.held[:0], st.held[n:]...)
	}
	return nil
}

// flush passes on what is held: the command ended without its marker.
func (st *sessionStream) flush() {
	if !st.over {
		_, _ = st.out.Write(st.held)
		st.held = nil
	}
}

// runInSession runs command in s and returns its output, as bash does:
// its standard output, then its standard error apart (the shell's stderr
// is a pipe of its own), each capped and spilled as bash's output is.
func (c *CodeTools) runInSession(ctx context.Context, owner string, s *bashSession, command string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	timeout := c.cfg.bash.bashTimeout
	j := s.job
	j.Read(ctx, jobs.ReadOptions{}) // drop what earlier commands left behind
	s.seq++
	errMarker := fmt.Sprintf("%s_err %d", s.marker, s.seq)
	// The command is evaluated in the shell itself (cd and export stay),
	// its input empty, then the marker and its exit code are printed, and
	// a marker of this command on standard error: what the command wrote
	// there comes before it.
	line := "__llmtoolkit_c=" + ansiCQuote(command) + "; eval \"$__llmtoolkit_c\" </dev/null; printf '\\n%s %d\\n' '" + s.marker + "' \"$?\"; printf '\\n%s\\n' '" + errMarker + "' >&2\n"
	began := time.Now()
	if err := j.Write([]byte(line)); err != nil {
		c.endSession(owner, "")
		return "", fmt.Errorf("bash: the session cannot take the command: %w", err)
	}
	spill := func() (*os.File, error) { return c.spills.Create(c.cfg.bash.spillDir) }
	stdout := &sessionStream{out: proc.NewOutput(spill, c.cfg.bash.spillMaxBytes),
		done: regexp.MustCompile(`\n` + regexp.QuoteMeta(s.marker) + ` (-?\d+)\n`)}
	stderr := &sessionStream{out: proc.NewOutput(spill, c.cfg.bash.spillMaxBytes),
		done: regexp.MustCompile(`\n` + regexp.QuoteMeta(errMarker) + `\n`)}
	defer func() {
		for _, o := range []*proc.Output{stdout.out, stderr.out} {
			if path := o.Finish(); path != "" {
				c.spills.Keep(path, c.cfg.bash.spillMaxAge, c.cfg.bash.spillMaxFiles)
			}
		}
	}()
	code, timedOut, ended := -1, false, ""
	deadline := time.Now().Add(timeout)
	var exited time.Time // when the exit code came
	for {
		left := time.Until(deadline)
		if !exited.IsZero() {
			left = min(left, sessionErrGrace-time.Since(exited))
			if left <= 0 {
				break // the shell's stderr goes elsewhere: what came is shown
			}
		}
		if left <= 0 {
			timedOut = true
			break
		}
		ch := j.Read(ctx, jobs.ReadOptions{Wait: left, Settle: time.Millisecond})
		if m := stdout.take(ch.Data); m != nil {
			code, _ = strconv.Atoi(string(m[1]))
			exited = time.Now()
		}
		stderr.take(ch.Err)
		if stdout.over && stderr.over {
			break
		}
		if ch.Info.State != jobs.Running {
			if stdout.over {
				break
			}
			stdout.flush()
			stderr.flush()
			ended = "the command ended the shell"
			if ch.Info.ExitCode >= 0 {
				ended += fmt.Sprintf(" (exit code %d)", ch.Info.ExitCode)
			}
			code = ch.Info.ExitCode
			break
		}
		if ctx.Err() != nil {
			break
		}
	}
	if !stdout.over && ended == "" { // timed out or cancelled: what came is shown
		stdout.flush()
	}
	stderr.flush()
	elapsed := time.Since(began)
	switch {
	case timedOut:
		c.endSession(owner, "")
	case ctx.Err() != nil && code < 0:
		c.endSession(owner, "its command was cancelled")
	case ended != "":
		c.endSession(owner, ended)
	}
	total := stdout.out.Total() + stderr.out.Total()
	text := stdout.out.Text() // "(no output)" when neither wrote
	if total > 0 {
		text = streamText(stdout.out)
		if errText := streamText(stderr.out); errText != "" {
			text = strings.TrimPrefix(text+"\n\nstderr:\n"+errText, "\n\n")
		}
	}
	p := ProcessPayload{
		Command: command, ExitCode: code, Output: text, OutputBytes: total,
		DurationMS: elapsed.Milliseconds(), TimedOut: timedOut,
		OutputFile: stdout.out.Path(), OutputFileCut: stdout.out.Cut(), Sandbox: c.sandboxName(),
	}
	if p.OutputFile == "" {
		p.OutputFile, p.OutputFileCut = stderr.out.Path(), stderr.out.Cut()
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayProcess, Payload: p})
	prefix := text + "\n\n"
	if total == 0 {
		prefix = ""
	}
	switch {
	case timedOut:
		return "", &commandError{fmt.Sprintf("%sCommand timed out after %d seconds; the bash session was killed with it, and the next command starts a new one", prefix, int(timeout.Round(time.Second)/time.Second))}
	case ctx.Err() != nil && code < 0:
		return "", fmt.Errorf("%sCommand cancelled: %w", prefix, ctx.Err())
	case ended != "":
		return "", &commandError{fmt.Sprintf("%s%s; the next command starts a new session", prefix, strings.ToUpper(ended[:1])+ended[1:])}
	case code != 0:
		return "", &commandError{fmt.Sprintf("%sCommand exited with code %d", prefix, code)}
	}
	return text, nil
}
