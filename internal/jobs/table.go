package jobs

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/proc"
)

// Defaults of [Limits].
const (
	DefaultMaxJobs     = 32
	DefaultRingBytes   = 1 << 20
	DefaultMaxLifetime = time.Hour
	DefaultIdleTimeout = 30 * time.Minute
	MinRingBytes       = 4 << 10
)

// Limits bound what a table holds. Zero fields take the defaults.
type Limits struct {
	// MaxJobs is how many jobs the table holds, ended ones included
	// (DefaultMaxJobs): to start one more, the oldest ended job is
	// forgotten (its log stays, under the log's own retention); when all
	// are running, Start fails with ErrTooManyJobs.
	MaxJobs int
	// RingBytes is the output each job keeps in memory for Read
	// (DefaultRingBytes); older output is in the log only.
	RingBytes int
	// LogBytes caps each job's log file (see proc.SpillFile); total
	// output kept on disk is at most MaxJobs×LogBytes plus the ended
	// logs the retention keeps. 0 is proc.DefaultSpillMaxBytes.
	LogBytes int64
	// MaxLifetime is how long a job may run before it is killed
	// (DefaultMaxLifetime).
	MaxLifetime time.Duration
	// IdleTimeout kills a terminal job that was neither read nor
	// written for that long (DefaultIdleTimeout); jobs without a
	// terminal have only MaxLifetime.
	IdleTimeout time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxJobs <= 0 {
		l.MaxJobs = DefaultMaxJobs
	}
	if l.RingBytes <= 0 {
		l.RingBytes = DefaultRingBytes
	}
	l.RingBytes = max(l.RingBytes, MinRingBytes)
	if l.LogBytes <= 0 {
		l.LogBytes = proc.DefaultSpillMaxBytes
	}
	l.LogBytes = max(l.LogBytes, proc.MinSpillMaxBytes)
	if l.MaxLifetime <= 0 {
		l.MaxLifetime = DefaultMaxLifetime
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	return l
}

// Logs makes and keeps the jobs' log files: the spill files of
// codetools (proc.SpillFiles), so that they share its folder, its
// retention and its removal at Close.
type Logs struct {
	Create func() (*os.File, error) // a new log file
	Keep   func(path string)        // the job ended: its log is kept under the retention
}

// Table holds the jobs of one owner of processes (a CodeTools). It is
// safe for concurrent use.
type Table struct {
	limits Limits
	logs   Logs
	wrap   guard.Wrap

	mu     sync.Mutex
	jobs   []*Job // in start order
	since  int    // the first id the table may have given: older ones are lost
	closed bool
}

// NewTable returns an empty table; wrap makes the error of a panic in a
// job's goroutines (nil: internal/guard's).
func NewTable(l Limits, logs Logs, wrap guard.Wrap) *Table {
	return &Table{limits: l.withDefaults(), logs: logs, wrap: wrap, since: nextID()}
}

// Limits returns the table's bounds, defaults applied.
func (t *Table) Limits() Limits { return t.limits }

// Start runs s.Cmd as a new job. It fails with ErrTooManyJobs when the
// table is full of running jobs, ErrClosed after Close, or the error of
// starting the command; s.Done runs in every case.
func (t *Table) Start(s Spec) (j *Job, err error) {
	defer func() {
		if err != nil && s.Done != nil {
			s.Done()
		}
	}()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, ErrClosed
	}
	if len(t.jobs) >= t.limits.MaxJobs && !t.forgetLocked() {
		t.mu.Unlock()
		return nil, fmt.Errorf("%w: %d jobs are running, the most this host allows; stop one first", ErrTooManyJobs, len(t.jobs))
	}
	j = &Job{id: newID(), spec: s, table: t, start: time.Now(), out: newRing(t.limits.RingBytes),
		changed: make(chan struct{}), stop: make(chan string, 1), done: make(chan struct{})}
	j.touched = j.start
	t.jobs = append(t.jobs, j) // holds the slot while it starts
	t.mu.Unlock()
	defer func() {
		if err != nil {
			t.remove(j)
		}
	}()

	cmd := s.Cmd
	var out, child *os.File // the output's read end, the command's end
	var errOut *os.File     // standard error's read end (Spec.SplitStderr)
	var closeChild []*os.File
	if s.TTY {
		master, slave, err := pty.Open()
		if err != nil {
			return nil, fmt.Errorf("jobs: open a terminal: %w", err)
		}
		cols, rows := s.Cols, s.Rows
		if cols <= 0 || rows <= 0 {
			cols, rows = 80, 24
		}
		_ = pty.Setsize(master, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)})
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
		out, child, j.stdin = master, slave, master
		closeChild = []*os.File{slave}
		j.term = newScreen(cols, rows, master)
	} else {
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		cmd.Stdout, cmd.Stderr = pw, pw // one pipe keeps the order of writes
		out, child = pr, pw
		closeChild = []*os.File{pw}
		if s.SplitStderr {
			er, ew, err := os.Pipe()
			if err != nil {
				pr.Close()
				pw.Close()
				return nil, fmt.Errorf("jobs: %w", err)
			}
			cmd.Stderr, errOut, j.errOut = ew, er, newRing(t.limits.RingBytes)
			closeChild = append(closeChild, ew)
		}
		if s.Stdin {
			ir, iw, err := os.Pipe()
			if err != nil {
				pr.Close()
				pw.Close()
				if errOut != nil {
					errOut.Close()
					closeChild[len(closeChild)-1].Close()
				}
				return nil, fmt.Errorf("jobs: %w", err)
			}
			cmd.Stdin, j.stdin = ir, iw
			closeChild = append(closeChild, ir)
		}
	}
	if t.logs.Create != nil {
		if f, err := t.logs.Create(); err != nil {
			j.logErr = err
		} else {
			j.logPath, j.spill = f.Name(), proc.NewSpillFile(f, t.limits.LogBytes)
		}
	}
	trap := proc.NewTrap(fmt.Sprintf("job %d", j.id), t.wrap)
	g := proc.NewGuard(cmd, child, trap)
	if err := cmd.Start(); err != nil {
		for _, f := range closeChild {
			f.Close()
		}
		out.Close()
		if errOut != nil {
			errOut.Close()
		}
		if j.stdin != nil && !s.TTY {
			j.stdin.Close()
		}
		if j.term != nil {
			j.term.close()
		}
		if j.spill != nil {
			_ = j.spill.Finish()
			if t.logs.Keep != nil {
				t.logs.Keep(j.logPath)
			}
		}
		return nil, fmt.Errorf("jobs: cannot start %s: %w", cmd.Path, err)
	}
	for _, f := range closeChild {
		f.Close()
	}
	g.Started()
	go func() {
		defer guard.Recover("jobs: supervisor", t.wrap, nil)
		j.run(g, trap, out, errOut, t.limits)
	}()
	return j, nil
}

// forgetLocked drops the oldest ended job, reporting whether one was.
func (t *Table) forgetLocked() bool {
	for i, j := range t.jobs {
		select {
		case <-j.done:
			t.jobs = slices.Delete(t.jobs, i, i+1)
			return true
		default:
		}
	}
	return false
}

func (t *Table) remove(j *Job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.jobs = slices.DeleteFunc(t.jobs, func(x *Job) bool { return x == j })
}

// Get returns the job id when it is owner's; otherwise ErrNoJob (another
// owner's or another table's job is not named, nor a forgotten one), or
// ErrJobLost for an id this process never gave (a job of a process
// before this one, or of another process: ids are unique per process and
// drawn from a random start, see newID) or gave before the table was made
// (tools made anew in the same process).
func (t *Table) Get(id int, owner string) (*Job, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, j := range t.jobs {
		if j.id == id && j.spec.Owner == owner {
			return j, nil
		}
	}
	if id < t.since || !givenHere(id) {
		return nil, fmt.Errorf("job %d: %w", id, ErrJobLost)
	}
	return nil, fmt.Errorf("%w: %d", ErrNoJob, id)
}

// List returns the jobs owner may reach, in start order.
func (t *Table) List(owner string) []Info {
	t.mu.Lock()
	held := slices.Clone(t.jobs)
	t.mu.Unlock()
	var out []Info
	for _, j := range held {
		if j.spec.Owner == owner {
			out = append(out, j.Info())
		}
	}
	return out
}

// Running counts the jobs still running.
func (t *Table) Running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, j := range t.jobs {
		select {
		case <-j.done:
		default:
			n++
		}
	}
	return n
}

// Close kills every job and returns once all their processes are gone;
// Start fails afterwards.
func (t *Table) Close() {
	t.mu.Lock()
	t.closed = true
	held := slices.Clone(t.jobs)
	t.mu.Unlock()
	for _, j := range held {
		j.Kill("closed")
	}
	for _, j := range held {
		<-j.done
	}
}

// ended is called by a job's supervisor once it is gone.
func (t *Table) ended(j *Job) {
	if j.logPath != "" && t.logs.Keep != nil {
		t.logs.Keep(j.logPath)
	}
}
