package codetools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/calltask"
	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/jobs"
	"github.com/llmtoolkit/llmtoolkit/internal/proc"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// Bounds of job_output's wait.
const (
	jobMaxWait       = 600 * time.Second
	jobFirstOutput   = time.Second // how long bash waits for a new job's first output
	jobKillWait      = 10 * time.Second
	jobCommandShown  = 200 // bytes of a command shown in listings
	defaultJobWaitMS = 0
)

// setupJobs makes the table of jobs when background jobs or terminals
// are on.
func (c *CodeTools) setupJobs() {
	j := c.cfg.jobs
	if !j.background && !j.terminals && !c.cfg.bash.persistent {
		return
	}
	b := c.cfg.bash
	c.jobs = jobs.NewTable(jobs.Limits{
		MaxJobs: j.limits.MaxJobs, RingBytes: j.limits.MemoryPerJob, LogBytes: b.spillMaxBytes,
		MaxLifetime: j.limits.MaxLifetime, IdleTimeout: j.limits.IdleTimeout,
	}, jobs.Logs{
		Create: func() (*os.File, error) { return c.spills.Create(c.cfg.bash.spillDir) },
		Keep:   func(path string) { c.spills.Keep(path, c.cfg.bash.spillMaxAge, c.cfg.bash.spillMaxFiles) },
	}, toolPanic)
}

// closeJobs kills every job; it returns once their processes are gone.
func (c *CodeTools) closeJobs() {
	if c.jobs != nil {
		c.jobs.Close()
	}
}

// jobOwner is whose a job is: the session (its tenant_id and
// conversation_id), the run and the agent of the call, so that a
// sub-agent's jobs are its own and another session's or run's are out of
// reach.
func jobOwner(ctx context.Context) string {
	sc := llmtoolkit.ScopeFrom(ctx)
	key := func(k string) string {
		if v, ok := sc.Session[k]; ok {
			return fmt.Sprintf("%T:%v", v, v)
		}
		return ""
	}
	return strings.Join([]string{key("tenant_id"), key("conversation_id"), sc.RunID, sc.AgentID}, "\x00")
}

// jobSpecs lists the job tools, when on.
func (c *CodeTools) jobSpecs() []toolSpec {
	if !c.cfg.jobs.background {
		return nil
	}
	return []toolSpec{c.jobOutputSpec(), c.jobListSpec(), c.jobKillSpec()}
}

// jobEnds says when a job ends, for the descriptions.
func (c *CodeTools) jobEnds() string {
	l := c.jobs.Limits()
	return fmt.Sprintf("A job ends, with every process it started, when its command ends, when stopped, after %s, or when the tools are closed; at most %d jobs are kept.",
		l.MaxLifetime, l.MaxJobs)
}

// startJob starts command as a background job of the caller's.
func (c *CodeTools) startJob(ctx context.Context, command string, tty bool, cols, rows int, stdin bool) (*jobs.Job, string, error) {
	return c.startJobSpec(ctx, jobs.Spec{Command: command, TTY: tty, Cols: cols, Rows: rows, Stdin: stdin})
}

// startJobSpec is startJob for a spec's command, terminal, input and
// streams (its Cmd, Owner and Done are set here).
func (c *CodeTools) startJobSpec(ctx context.Context, spec jobs.Spec) (*jobs.Job, string, error) {
	sc, done, err := c.bashCommand(spec.Command, spec.TTY)
	if err != nil {
		return nil, "", fmt.Errorf("sandbox: %w", err)
	}
	spec.Cmd, spec.Owner, spec.Done = sc, jobOwner(ctx), done
	j, err := c.jobs.Start(spec)
	if err != nil {
		return nil, "", err
	}
	if life := calltask.Lifetime(ctx); life != nil { // a sub-agent's: it ends with the sub-agent
		go func() {
			defer guard.Recover("codetools: a sub-agent's job", nil, nil)
			select {
			case <-life:
				j.Kill("its sub-agent ended")
			case <-j.Done():
			}
		}()
	}
	return j, sc.Fallback, nil
}

// jobEndTail bounds the output a job's end report holds: its last bytes.
const jobEndTail = 2 << 10

// reportJobEnd reports j's end, once it comes, where the call that
// started it says (calltask.Later: the audit trail), for a job that
// outlives its call; it does nothing without such a report. clean, when
// not nil, rewrites the output's tail first (a bash session's markers).
func (c *CodeTools) reportJobEnd(ctx context.Context, j *jobs.Job, clean func([]byte) []byte) {
	report := calltask.Later(ctx)
	if report == nil {
		return
	}
	go func() {
		defer guard.Recover("codetools: a job's end report", nil, nil)
		<-j.Done()
		in := j.Info() // not read: the model's next read still sees all that is new
		text := ""
		if tail := j.Tail(jobEndTail); len(tail) > 0 {
			if in.TTY {
				tail = []byte(jobs.Plain(tail))
			}
			if clean != nil {
				tail = clean(tail)
			}
			text = "\nLast output:\n" + strings.ToValidUTF8(strings.TrimSuffix(string(tail), "\n"), "\uFFFD")
		}
		report(calltask.Event{Kind: "job_end", JobID: in.ID, IsError: in.State == jobs.Killed || in.ExitCode != 0,
			Content: fmt.Sprintf("Job %d (%s) ended: %s.%s", in.ID, in.Command, jobStatus(in), text)})
	}()
}

// bashBackground runs bash's command as a job: the answer names it and
// shows its first output.
func (c *CodeTools) bashBackground(ctx context.Context, command string) (string, error) {
	w := c.watchJob(ctx)
	j, fallback, err := c.startJob(ctx, command, false, 0, 0, false)
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	c.keepJobWatch(j, w)
	c.reportJobEnd(ctx, j, nil)
	ch := j.Read(ctx, jobs.ReadOptions{Wait: jobFirstOutput})
	c.showJob(ctx, JobStarted, ch, c.jobText(ch), false, fallback)
	return c.jobAnswer("Started job", ch, true), nil
}

// bashInTask runs a background command in the MCP task its call runs
// in: as a job, to its end (its lifetime bounds it), answered as a
// one-shot command; the task's cancellation (ctx) kills it.
func (c *CodeTools) bashInTask(ctx context.Context, command string) (string, error) {
	j, fallback, err := c.startJob(ctx, command, false, 0, 0, false)
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	ch := j.Read(ctx, jobs.ReadOptions{Wait: c.jobs.Limits().MaxLifetime + time.Minute, UntilExit: true})
	if ch.Info.State == jobs.Running { // the task was cancelled
		j.Kill("cancelled")
		<-j.Done()
		text, cut := c.jobTextCut(ch)
		c.showOneShot(ctx, j, text, cut, fallback, false)
		return "", fmt.Errorf("%s\n\nCommand cancelled: %w", text, ctx.Err())
	}
	return c.oneShotAnswer(ctx, j, ch, fallback)
}

// bashAuto runs a one-shot command as a job, so that one still running
// after the auto-background delay is kept as a job rather than killed.
func (c *CodeTools) bashAuto(ctx context.Context, command string, timeout time.Duration) (string, error) {
	j, fallback, err := c.startJob(ctx, command, false, 0, 0, false)
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	after := c.cfg.jobs.autoAfter
	if timeout <= after { // the timeout comes first: a one-shot command
		ch := j.Read(ctx, jobs.ReadOptions{Wait: timeout, UntilExit: true})
		if ch.Info.State == jobs.Running {
			j.Kill("timed out")
			<-j.Done()
			text, cut := c.jobTextCut(ch)
			c.showOneShot(ctx, j, text, cut, fallback, true)
			return "", &commandError{fmt.Sprintf("%s\n\nCommand timed out after %d seconds", text, int(timeout.Round(time.Second)/time.Second))}
		}
		return c.oneShotAnswer(ctx, j, ch, fallback)
	}
	ch := j.Read(ctx, jobs.ReadOptions{Wait: after, UntilExit: true})
	if ctx.Err() != nil && ch.Info.State == jobs.Running {
		j.Kill("cancelled")
		<-j.Done()
		text, cut := c.jobTextCut(ch)
		c.showOneShot(ctx, j, text, cut, fallback, false)
		return "", fmt.Errorf("%s\n\nCommand cancelled: %w", text, ctx.Err())
	}
	if ch.Info.State != jobs.Running {
		return c.oneShotAnswer(ctx, j, ch, fallback)
	}
	// A job from now on: bash's own scan (after this returns) reports
	// what it changed so far, the job's watch what follows.
	c.keepJobWatch(j, c.watchJob(ctx))
	c.reportJobEnd(ctx, j, nil)
	c.showJob(ctx, JobStarted, ch, c.jobText(ch), false, fallback)
	return c.jobAnswer(fmt.Sprintf("The command was still running after %s, so it goes on in the background as job", after), ch, true), nil
}

// oneShotAnswer answers an ended job as bash answers a command, and
// shows it as bash does.
func (c *CodeTools) oneShotAnswer(ctx context.Context, j *jobs.Job, ch jobs.Chunk, fallback string) (string, error) {
	text, cut := c.jobTextCut(ch)
	c.showOneShot(ctx, j, text, cut, fallback, false)
	in := ch.Info
	switch {
	case in.State == jobs.Killed:
		return "", &commandError{fmt.Sprintf("%s\n\nCommand killed: %s", text, in.Reason)}
	case in.ExitCode != 0:
		return "", &commandError{fmt.Sprintf("%s\n\nCommand exited with code %d", text, in.ExitCode)}
	}
	return text, nil
}

// jobText is the output of a chunk as the model reads it: the tail of
// what is new (proc.MaxLines lines, proc.MaxBytes bytes) with a notice
// naming the log when not all of it is shown; "(no output)" when none.
func (c *CodeTools) jobText(ch jobs.Chunk) string {
	text, _ := c.jobTextCut(ch)
	return text
}

// jobTextCut is jobText, and whether some of the new output is not shown.
func (c *CodeTools) jobTextCut(ch jobs.Chunk) (string, bool) {
	data := ch.Data
	if ch.Info.TTY {
		data = []byte(jobs.Plain(data))
	}
	if len(data) == 0 && ch.Dropped == 0 {
		return "(no new output)", false
	}
	skipped := ch.Dropped
	if len(data) > proc.MaxBytes {
		cut := len(data) - proc.MaxBytes
		if i := bytes.IndexByte(data[cut:], '\n'); i >= 0 {
			cut += i + 1
		}
		skipped += int64(cut)
		data = data[cut:]
	}
	for lines := bytes.Count(data, []byte{'\n'}); lines > proc.MaxLines; lines-- {
		i := bytes.IndexByte(data, '\n')
		skipped += int64(i + 1)
		data = data[i+1:]
	}
	text := strings.ToValidUTF8(strings.TrimSuffix(string(data), "\n"), "\uFFFD")
	if skipped > 0 {
		where := "the log is unavailable"
		if ch.Info.Log != "" {
			where = "all of it is in " + ch.Info.Log
		}
		text = fmt.Sprintf("[%s of earlier output not shown; %s]\n%s", textutil.HumanSize(skipped), where, text)
	}
	return text, skipped > 0
}

// jobStatus is one line on a job's state.
func jobStatus(in jobs.Info) string {
	took := in.Elapsed.Round(100 * time.Millisecond)
	switch in.State {
	case jobs.Running:
		return fmt.Sprintf("running for %s", took)
	case jobs.Killed:
		return fmt.Sprintf("killed (%s) after %s", in.Reason, took)
	}
	return fmt.Sprintf("exited with code %d after %s", in.ExitCode, took)
}

// jobAnswer is the answer about a job: a header, then its new output.
func (c *CodeTools) jobAnswer(lead string, ch jobs.Chunk, first bool) string {
	in := ch.Info
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d: %s.", lead, in.ID, jobStatus(in))
	if in.Log != "" {
		fmt.Fprintf(&b, " Its whole output is kept in %s", in.Log)
		if in.LogCut {
			b.WriteString(" (cut to its beginning and end)")
		}
		b.WriteString(".")
	}
	if in.Left != "" {
		fmt.Fprintf(&b, " [%s]", in.Left)
	}
	if first && in.State == jobs.Running {
		fmt.Fprintf(&b, " Read its output with job_output (job_id %d), stop it with job_kill.", in.ID)
	}
	if first {
		b.WriteString("\nOutput so far:\n")
	} else {
		b.WriteString("\nNew output:\n")
	}
	b.WriteString(c.jobText(ch))
	return b.String()
}

// jobArg finds the caller's job named by the argument name.
func (c *CodeTools) jobArg(ctx context.Context, tool, name string, args map[string]any) (*jobs.Job, error) {
	if c.spills.IsClosed() {
		return nil, fmt.Errorf("%s: %w", tool, errToolsClosed)
	}
	id := intArg(args, name, 0)
	j, err := c.jobs.Get(id, jobOwner(ctx))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return j, nil
}

func (c *CodeTools) jobOutputSpec() toolSpec {
	return makeSpec("job_output",
		"Read the output a background job (started by bash with run_in_background) wrote since the last read, and its state. "+
			"With wait_seconds, wait up to that long for new output (returning once it pauses) or, with until_exit, for the job to end. "+
			fmt.Sprintf("At most the last %d lines or %d KiB of new output are shown; the answer names the job's log file, which holds all of it (read_file or grep it when it lies in the working directory). ", proc.MaxLines, proc.MaxBytes/1024)+
			c.jobEnds(),
		map[string]any{
			"type": "object",
			"properties": map[string]any{
				"job_id":       map[string]any{"type": "integer", "minimum": 1, "description": "The job's id, as bash or job_list gave it."},
				"wait_seconds": map[string]any{"type": "integer", "minimum": 0, "maximum": int(jobMaxWait / time.Second), "description": "Seconds to wait for new output (or the end, with until_exit). Default 0: answer at once."},
				"until_exit":   map[string]any{"type": "boolean", "description": "Wait (up to wait_seconds) for the job to end rather than for its next output."},
			},
			"required":             []any{"job_id"},
			"additionalProperties": false,
		}, llmtoolkit.Annotations{ReadOnly: true}, c.jobOutput)
}

func (c *CodeTools) jobOutput(ctx context.Context, args map[string]any) (string, error) {
	j, err := c.jobArg(ctx, "job_output", "job_id", args)
	if err != nil {
		return "", err
	}
	wait := min(time.Duration(intArg(args, "wait_seconds", defaultJobWaitMS))*time.Second, jobMaxWait)
	ch := j.Read(ctx, jobs.ReadOptions{Wait: wait, UntilExit: boolArg(args, "until_exit", false)})
	c.showJob(ctx, JobRead, ch, c.jobText(ch), false, "")
	return c.jobAnswer("Job", ch, false) + c.jobDiagnostics(ctx, j), nil
}

func (c *CodeTools) jobListSpec() toolSpec {
	return makeSpec("job_list",
		"List your background jobs: id, state, how long they ran, unread output, command and log file. "+c.jobEnds(),
		map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false},
		llmtoolkit.Annotations{ReadOnly: true}, c.jobList)
}

func (c *CodeTools) jobList(ctx context.Context, _ map[string]any) (string, error) {
	if c.spills.IsClosed() {
		return "", fmt.Errorf("job_list: %w", errToolsClosed)
	}
	list := c.jobs.List(jobOwner(ctx))
	if len(list) == 0 {
		return "No jobs.", nil
	}
	var b strings.Builder
	for i, in := range list {
		if i > 0 {
			b.WriteByte('\n')
		}
		kind := ""
		if in.TTY {
			kind = " (terminal)"
		}
		fmt.Fprintf(&b, "%d%s: %s; %s unread of %s; %s", in.ID, kind, jobStatus(in),
			textutil.HumanSize(in.Unread), textutil.HumanSize(in.Total), strconvQuoteLine(textutil.CutUTF8(in.Command, jobCommandShown)))
		if in.Log != "" {
			fmt.Fprintf(&b, "; log %s", in.Log)
		}
	}
	return b.String(), nil
}

// strconvQuoteLine shows a command on one line: quoted when it holds a
// line break or another control character.
func strconvQuoteLine(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Sprintf("%q", s)
	}
	return s
}

func (c *CodeTools) jobKillSpec() toolSpec {
	return makeSpec("job_kill",
		"Stop a background job: it and every process it started are killed. The answer gives its unread output.",
		map[string]any{
			"type": "object",
			"properties": map[string]any{
				"job_id": map[string]any{"type": "integer", "minimum": 1, "description": "The job's id, as bash or job_list gave it."},
			},
			"required":             []any{"job_id"},
			"additionalProperties": false,
		}, llmtoolkit.Annotations{Destructive: true}, c.jobKill)
}

func (c *CodeTools) jobKill(ctx context.Context, args map[string]any) (string, error) {
	j, err := c.jobArg(ctx, "job_kill", "job_id", args)
	if err != nil {
		return "", err
	}
	if in := j.Info(); in.State != jobs.Running {
		ch := j.Read(ctx, jobs.ReadOptions{})
		c.showJob(ctx, JobStopped, ch, c.jobText(ch), false, "")
		return c.jobAnswer("Job", ch, false), nil
	}
	j.Kill("stopped")
	t := time.NewTimer(jobKillWait)
	defer t.Stop()
	select {
	case <-j.Done():
	case <-t.C:
		return "", fmt.Errorf("job_kill: job %d: %w", j.ID(), errors.New("its processes did not end within 10 s"))
	case <-ctx.Done():
		return "", fmt.Errorf("job_kill: %w", ctx.Err())
	}
	ch := j.Read(ctx, jobs.ReadOptions{})
	c.showJob(ctx, JobStopped, ch, c.jobText(ch), false, "")
	return c.jobAnswer("Job", ch, false) + c.jobDiagnostics(ctx, j), nil
}

// showJob shows a call on a job ([JobPayload]); fallback is the
// sandbox's note when it could not run as asked.
func (c *CodeTools) showJob(ctx context.Context, event string, ch jobs.Chunk, output string, screen bool, fallback string) {
	in := ch.Info
	sandbox := c.sandboxName()
	if fallback != "" {
		sandbox += "; " + fallback
	}
	code := in.ExitCode
	if in.State == jobs.Running {
		code = 0
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayJob, Payload: JobPayload{
		Event: event, JobID: in.ID, Command: in.Command, Terminal: in.Input, TTY: in.TTY,
		State: in.State.String(), ExitCode: code, Reason: in.Reason, Output: output, Screen: screen,
		OutputBytes: in.Total, DurationMS: in.Elapsed.Milliseconds(), LogFile: in.Log, LogFileCut: in.LogCut,
		Sandbox: sandbox,
	}})
}

// showOneShot shows a command bash ran through a job that ended within
// the call as bash shows a command ([ProcessPayload]); cut says the text
// is the output's tail, whose whole is in the job's log.
func (c *CodeTools) showOneShot(ctx context.Context, j *jobs.Job, text string, cut bool, fallback string, timedOut bool) {
	in := j.Info() // after the end: the log's cut is known
	sandbox := c.sandboxName()
	if fallback != "" {
		sandbox += "; " + fallback
	}
	file := ""
	if cut {
		file = in.Log
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayProcess, Payload: ProcessPayload{
		Command: in.Command, ExitCode: in.ExitCode, Output: text, OutputBytes: in.Total,
		DurationMS: in.Elapsed.Milliseconds(), TimedOut: timedOut, OutputFile: file, OutputFileCut: in.LogCut && file != "",
		Sandbox: sandbox,
	}})
}

// bashJobsNote is what bash's description says of jobs, when on.
func (c *CodeTools) bashJobsNote() string {
	if !c.cfg.jobs.background {
		return ""
	}
	note := " With run_in_background, the command runs on as a background job: use it for servers and watchers, never a trailing &. "
	if a := c.cfg.jobs.autoAfter; a > 0 {
		note += fmt.Sprintf("A command still running after %s (before its timeout) goes on as a background job instead of being killed. ", a)
	}
	return note + c.jobEnds()
}
