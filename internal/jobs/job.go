package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/proc"
	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// Spec is a job to start.
type Spec struct {
	// Cmd is the prepared command (a sandbox backend's, or a plain one);
	// the job sets its standard streams. With TTY, Cmd must have been
	// prepared with sandbox.Spec.TTY.
	Cmd *sandbox.Cmd
	// Command is the command line, for listings.
	Command string
	// Owner is who may reach the job: Get and List match it exactly.
	Owner string
	// TTY runs the command on a pseudo-terminal of Cols×Rows (80×24 when
	// zero), whose screen a terminal emulator keeps (see [Job.Screen]).
	TTY        bool
	Cols, Rows int
	// Stdin gives a command without a terminal a pipe as its standard
	// input (for [Job.Write]); otherwise it reads an empty input.
	Stdin bool
	// SplitStderr gives a command without a terminal a pipe of its own
	// for its standard error, read apart from its output ([Chunk.Err]);
	// otherwise both share one pipe, in the order written. The log holds
	// both.
	SplitStderr bool
	// Done, when set, runs once every process of the job is gone (it
	// removes the job's temporary folder).
	Done func()
}

// State is where a job is.
type State int

// The states of a job.
const (
	Running State = iota
	Exited        // the command ended on its own
	Killed        // stopped by Kill, Close or the table's lifetime bound
)

func (s State) String() string {
	switch s {
	case Running:
		return "running"
	case Exited:
		return "exited"
	case Killed:
		return "killed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Info describes a job at one moment.
type Info struct {
	ID       int
	Command  string
	Owner    string
	TTY      bool
	Input    bool // it takes input (a terminal, or Spec.Stdin): Write reaches it
	State    State
	ExitCode int           // once ended: the exit code, 128+N for a death by signal N, -1 unknown
	Reason   string        // once killed: why ("stopped", "lifetime of 1h0m0s reached", "closed")
	Started  time.Time     // when it started
	Elapsed  time.Duration // how long it ran (so far)
	Total    int64         // bytes of output in all (standard error's too)
	Unread   int64         // bytes of output not yet returned by Read (standard error's too)
	Log      string        // the spill file holding the output ("" when none could be made)
	LogCut   bool          // the log lost its middle (known once ended)
	LogErr   string        // why the log is missing or incomplete
	Left     string        // processes that could not be killed (the /proc scan's note)
}

// Chunk is what one Read returns.
type Chunk struct {
	Data    []byte // the new output (terminals: escape sequences included)
	Dropped int64  // new output no longer in memory, before Data (it is in the log)
	Info    Info   // the job after the read
	// Err and ErrDropped are Data and Dropped for the standard error of
	// a job started with [Spec.SplitStderr].
	Err        []byte
	ErrDropped int64
}

// Job is a process running on after the call that started it.
type Job struct {
	id    int
	spec  Spec
	table *Table
	start time.Time

	stdin io.WriteCloser // pty master or stdin pipe; nil without input
	term  *screen        // the emulator, for a terminal

	mu       sync.Mutex
	out      *ring
	errOut   *ring // standard error, with Spec.SplitStderr
	errRead  int64 // errOut's offset of the first byte not yet read
	spill    *proc.SpillFile
	logPath  string
	logErr   error
	read     int64         // offset of the first byte not yet read
	touched  time.Time     // last Read or Write
	typed    []byte        // the line being typed (see Typed)
	changed  chan struct{} // closed and replaced at each output and at the end
	state    State
	code     int
	reason   string
	left     string
	ended    time.Time
	logCut   bool
	stopOnce sync.Once
	stop     chan string // a kill request and its reason
	done     chan struct{}
}

// ID returns the job's number, unique in its table.
func (j *Job) ID() int { return j.id }

// Owner returns who may reach the job.
func (j *Job) Owner() string { return j.spec.Owner }

// Done is closed once the job has ended and every process of it is gone.
func (j *Job) Done() <-chan struct{} { return j.done }

// Info returns the job's state.
func (j *Job) Info() Info {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.infoLocked()
}

func (j *Job) infoLocked() Info {
	end := time.Now()
	if j.state != Running {
		end = j.ended
	}
	in := Info{ID: j.id, Command: j.spec.Command, Owner: j.spec.Owner, TTY: j.spec.TTY, Input: j.stdin != nil, State: j.state,
		ExitCode: j.code, Reason: j.reason, Started: j.start, Elapsed: end.Sub(j.start),
		Total: j.out.total, Unread: j.out.total - j.read, Log: j.logPath, LogCut: j.logCut, Left: j.left}
	if j.errOut != nil {
		in.Total += j.errOut.total
		in.Unread += j.errOut.total - j.errRead
	}
	if j.logErr != nil {
		in.LogErr = j.logErr.Error()
	}
	return in
}

// ReadOptions say how long Read waits.
type ReadOptions struct {
	// Wait bounds how long Read waits for new output when there is none
	// yet (0: it returns at once).
	Wait time.Duration
	// UntilExit makes Read wait, up to Wait, for the job's end rather
	// than for its first new output.
	UntilExit bool
	// Settle is how long output must pause before a Read that waited
	// returns (so that a burst is read whole); 0 is 100 ms.
	Settle time.Duration
}

// Read returns the output written since the previous Read (or the
// start), waiting as o says; it returns early when ctx ends.
func (j *Job) Read(ctx context.Context, o ReadOptions) Chunk {
	j.touch()
	settle := o.Settle
	if settle <= 0 {
		settle = 100 * time.Millisecond
	}
	if o.Wait <= 0 {
		return j.take()
	}
	deadline := time.NewTimer(o.Wait)
	defer deadline.Stop()
	for {
		j.mu.Lock()
		ended, fresh, changed := j.state != Running, j.out.total > j.read || (j.errOut != nil && j.errOut.total > j.errRead), j.changed
		j.mu.Unlock()
		switch {
		case ended:
			return j.take()
		case fresh && !o.UntilExit:
			j.quiet(ctx, settle, deadline.C) // let a burst finish
			return j.take()
		}
		select {
		case <-changed:
		case <-deadline.C:
			return j.take()
		case <-ctx.Done():
			return j.take()
		}
	}
}

// quiet waits until no output came for settle, the job ended, the
// deadline passed or ctx ended.
func (j *Job) quiet(ctx context.Context, settle time.Duration, deadline <-chan time.Time) {
	for {
		j.mu.Lock()
		changed, running := j.changed, j.state == Running
		j.mu.Unlock()
		if !running {
			return
		}
		t := time.NewTimer(settle)
		select {
		case <-changed:
			t.Stop()
			continue
		case <-t.C:
			return
		case <-deadline:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

// take returns the unread output and marks it read.
func (j *Job) take() Chunk {
	j.mu.Lock()
	defer j.mu.Unlock()
	data, dropped := j.out.since(j.read)
	j.read = j.out.total
	c := Chunk{Data: data, Dropped: dropped, Info: j.infoLocked()}
	if j.errOut != nil {
		c.Err, c.ErrDropped = j.errOut.since(j.errRead)
		j.errRead = j.errOut.total
	}
	return c
}

// Tail returns the last n bytes of output kept in memory (or fewer)
// without moving the read offset.
func (j *Job) Tail(n int) []byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	data, _ := j.out.since(max(0, j.out.total-int64(n)))
	return data
}

// Write sends p to the job's input (the terminal's keys, or the stdin
// pipe). It fails with ErrNoInput when the job has none and
// ErrEnded once it ended.
func (j *Job) Write(p []byte) error {
	j.touch()
	if j.stdin == nil {
		return ErrNoInput
	}
	j.mu.Lock()
	running := j.state == Running
	j.mu.Unlock()
	if !running {
		return ErrEnded
	}
	j.mu.Lock()
	_, rest := typeLines(string(j.typed), string(p))
	j.typed = []byte(rest)
	j.mu.Unlock()
	if _, err := j.stdin.Write(p); err != nil {
		return fmt.Errorf("jobs: write to job %d: %w", j.id, err)
	}
	return nil
}

// Screen returns what a terminal job's screen shows, as text (lines
// without trailing spaces), and whether the program uses the
// alternate (full-screen) buffer. It returns "" for a job without one.
func (j *Job) Screen() (text string, fullScreen bool) {
	if j.term == nil {
		return "", false
	}
	return j.term.text()
}

// Kill stops the job: every process of it is killed (as a one-shot
// call's are). It returns at once; [Job.Done] is closed once they are
// gone.
func (j *Job) Kill(reason string) {
	j.stopOnce.Do(func() { j.stop <- reason })
}

// Wait returns once the job ended, or ctx ended first (its error).
func (j *Job) Wait(ctx context.Context) error {
	select {
	case <-j.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (j *Job) touch() {
	j.mu.Lock()
	j.touched = time.Now()
	j.mu.Unlock()
}

// idleSince returns the time of the last Read or Write.
func (j *Job) idleSince() time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.touched
}

// keep stores output for the reader: the screen, the ring (errOut's for
// standard error apart), the log, then a wake-up of the readers.
func (j *Job) keep(p []byte, stderr bool) {
	if j.term != nil {
		j.term.write(p)
	}
	j.mu.Lock()
	if stderr {
		j.errOut.write(p)
	} else {
		j.out.write(p)
	}
	if j.spill != nil {
		if _, err := j.spill.Write(p); err != nil && j.logErr == nil {
			j.logErr = err
		}
	}
	close(j.changed)
	j.changed = make(chan struct{})
	j.mu.Unlock()
}

// run supervises the job until every process of it is gone: output
// copied, the lifetime bound, Kill, the command's end.
func (j *Job) run(g proc.Guard, trap *proc.Trap, out, errOut *os.File, l Limits) {
	defer close(j.done)
	reader := func(f *os.File, stderr bool) func() {
		return func() {
			buf := make([]byte, 32*1024)
			for {
				n, err := f.Read(buf)
				if n > 0 {
					j.keep(buf[:n], stderr)
				}
				if err != nil {
					return
				}
			}
		}
	}
	copied := make(chan struct{})
	if errOut == nil {
		trap.Go("output reader", reader(out, false), func() { close(copied) })
	} else {
		outCopied, errCopied := make(chan struct{}), make(chan struct{})
		trap.Go("output reader", reader(out, false), func() { close(outCopied) })
		trap.Go("stderr reader", reader(errOut, true), func() { close(errCopied) })
		go func() {
			defer guard.Recover("jobs: readers", j.table.wrap, nil)
			<-outCopied
			<-errCopied
			close(copied)
		}()
	}
	exited := make(chan struct{})
	trap.Go("exit waiter", g.WaitExited, func() { close(exited) })

	life := time.NewTimer(l.MaxLifetime)
	defer life.Stop()
	var idle <-chan time.Time // terminals: checked a few times per IdleTimeout
	if j.spec.TTY {
		tick := time.NewTicker(max(l.IdleTimeout/4, 10*time.Millisecond))
		defer tick.Stop()
		idle = tick.C
	}
	reason := ""
	for reason == "" {
		select {
		case <-exited:
		case reason = <-j.stop:
		case <-life.C:
			reason = fmt.Sprintf("lifetime of %s reached", l.MaxLifetime)
		case <-idle:
			if time.Since(j.idleSince()) >= l.IdleTimeout {
				reason = fmt.Sprintf("idle for %s (neither read nor written)", l.IdleTimeout)
			}
			continue
		case <-trap.Failed():
			reason = "internal error"
		}
		break
	}
	if reason != "" {
		g.KillAll()
		<-exited
	}
	left := g.KillAll() // what the command left behind ends with it
	waitErr := g.Reap()
	if j.stdin != nil && !j.spec.TTY { // a terminal's input is its master, closed below
		_ = j.stdin.Close()
	}
	select {
	case <-copied:
	case <-time.After(2 * time.Second): // a process escaped and holds the output
	}
	_ = out.Close()
	if errOut != nil {
		_ = errOut.Close()
	}
	<-copied
	if j.term != nil {
		j.term.close()
	}
	code := 0
	if waitErr != nil {
		code = proc.ExitCode(waitErr)
	}
	if err := trap.Err(); err != nil && reason == "" {
		reason = err.Error()
	}
	if reason == "" && errors.Is(waitErr, sandbox.ErrServerLost) {
		reason = "lost: the session's sandbox server died while it ran (the next command starts a new one)"
	}
	func() {
		defer guard.Recover("jobs: done", nil, nil)
		if j.spec.Done != nil {
			j.spec.Done()
		}
	}()
	j.mu.Lock()
	if j.spill != nil {
		if err := j.spill.Finish(); err != nil && j.logErr == nil {
			j.logErr = err
		}
		j.logCut = j.spill.Cut()
	}
	j.state, j.code, j.left, j.ended = Exited, code, left, time.Now()
	if reason != "" {
		j.state, j.reason = Killed, reason
	}
	close(j.changed)
	j.changed = make(chan struct{})
	j.mu.Unlock()
	j.table.ended(j)
}

// Errors the callers branch on.
var (
	// ErrTooManyJobs is returned by Start when the table holds its
	// maximum of running jobs.
	ErrTooManyJobs = errors.New("too many jobs running")
	// ErrNoJob is returned for an id that names no job (or another
	// owner's).
	ErrNoJob = errors.New("no such job")
	// ErrJobLost is returned (wrapping ErrNoJob) for an id the table
	// never gave: a job of another process, lost when it ended (a host
	// restarted, a durable run resumed elsewhere), or of a table of this
	// process made before this one.
	ErrJobLost = fmt.Errorf("%w: these tools never started it; jobs end with the tools and the process that run them, so a job started before a restart (a resumed run) or by tools since closed was lost: start it again", ErrNoJob)
	// ErrNoInput is returned by Write to a job without input.
	ErrNoInput = errors.New("the job has no input: it was started without a terminal or stdin")
	// ErrEnded is returned by Write to a job that has ended.
	ErrEnded = errors.New("the job has ended")
	// ErrClosed is returned by Start after Close.
	ErrClosed = errors.New("jobs: the table is closed")
)
