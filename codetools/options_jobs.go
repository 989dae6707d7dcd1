package codetools

import (
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/jobs"
)

// jobsConfig holds the settings of background jobs and terminals.
type jobsConfig struct {
	background bool          // bash's run_in_background, job_output, job_list, job_kill
	terminals  bool          // exec_command, write_stdin
	autoAfter  time.Duration // a bash command still running after this becomes a job; 0: never
	limits     JobLimits
}

// JobLimits bounds the processes that outlive a call: background jobs and
// terminals together. A zero field keeps its default.
type JobLimits struct {
	// MaxJobs is how many jobs one CodeTools holds, ended ones included
	// until they are forgotten (oldest first) to make room (default 32).
	// A job started while all are running is refused with an error
	// wrapping [ErrTooManyJobs].
	MaxJobs int
	// MemoryPerJob is how much of a job's latest output is kept in memory
	// for job_output and write_stdin (default 1 MiB, at least 4 KiB);
	// older output is in the job's log file only, and the answer says so.
	MemoryPerJob int
	// MaxLifetime is how long a job may run before it is killed with
	// every process it started (default 1 hour).
	MaxLifetime time.Duration
	// IdleTimeout kills a terminal (exec_command's session) that was
	// neither read nor written for that long (default 30 minutes).
	IdleTimeout time.Duration
}

// WithBackgroundJobs adds background jobs: bash takes run_in_background
// (it answers at once with a job id and the first output), and three tools
// are added, named as crush names them: job_output (the output written
// since the last read, waiting up to a bound for more or for the end),
// job_list and job_kill. A job's output is kept in memory (see
// [JobLimits]) and in a log file, a spill file of bash (see
// [WithBashSpillDir], [WithBashSpillLimit], [WithBashSpillRetention]), so
// the total kept on disk is bounded as bash's spill files are. A job runs
// in the sandbox and the containment a one-shot command does, and ends,
// with every process it started, when its command ends, on job_kill, after
// [JobLimits].MaxLifetime, and at [CodeTools.Close]. Without this option
// the tools are the 12 of the package doc.
func WithBackgroundJobs() Option {
	return func(c *config) { c.jobs.background = true }
}

// WithBashAutoBackground makes a bash command still running after d
// (and before its timeout) a background job instead of killing it at its
// timeout: the answer gives its job id and the output so far. It implies
// [WithBackgroundJobs]. A value <= 0 turns it off.
func WithBashAutoBackground(d time.Duration) Option {
	return func(c *config) {
		c.jobs.autoAfter = max(d, 0)
		if d > 0 {
			c.jobs.background = true
		}
	}
}

// WithTerminals adds interactive terminals, named and shaped as Codex's:
// exec_command starts a command (on a pseudo-terminal with tty: true) and
// returns what it printed within yield_time_ms, or a session id while it
// runs; write_stdin types into it (text, keys, Ctrl-C as "\u0003") and
// returns what follows. A full-screen program (less, vi) is answered with
// its screen as text, read through a terminal emulator; other output has
// its escape sequences removed. Sessions are jobs: they share
// [JobLimits] and end as jobs do, and also after IdleTimeout.
func WithTerminals() Option {
	return func(c *config) { c.jobs.terminals = true }
}

// WithJobLimits sets the bounds of background jobs and terminals (see
// [JobLimits]; zero fields keep their defaults).
func WithJobLimits(l JobLimits) Option {
	return func(c *config) {
		if l.MaxJobs > 0 {
			c.jobs.limits.MaxJobs = l.MaxJobs
		}
		if l.MemoryPerJob > 0 {
			c.jobs.limits.MemoryPerJob = l.MemoryPerJob
		}
		if l.MaxLifetime > 0 {
			c.jobs.limits.MaxLifetime = l.MaxLifetime
		}
		if l.IdleTimeout > 0 {
			c.jobs.limits.IdleTimeout = l.IdleTimeout
		}
	}
}

// ErrTooManyJobs is wrapped by the error of a job or terminal refused
// because [JobLimits].MaxJobs are running.
var ErrTooManyJobs = jobs.ErrTooManyJobs

// ErrNoJob is wrapped by the error for a job id or session id that names
// no job of the caller's (another agent's jobs are not named).
var ErrNoJob = jobs.ErrNoJob

// ErrJobLost is wrapped (with [ErrNoJob]) by the error for a job id
// these tools never gave: jobs end with the process that runs them, so
// a job started before the host restarted (a durable run resumed in
// another process), or by tools closed before these were made, is lost,
// and a call on it says so at once. Ids are never given twice in a
// process and start at random in each (see the package doc), so such an
// id does not name a job of these tools.
var ErrJobLost = jobs.ErrJobLost

// WithSessionSandbox makes the commands of these tools share one sandbox
// network: with [SandboxPolicy].Network off, every command (one-shot,
// background job or terminal) joins one network namespace made by New,
// holding only a loopback, instead of a new one of its own; so a server a
// background job starts answers a later command's curl localhost, and
// nothing outside is reached. The sandbox is made once: a server started
// by New holds the namespaces and the file-system view under the policy
// and forks every command in it, a terminal's too (about 2 ms a command
// instead of 20); each command keeps its own PID namespace, of which it
// is the init (its processes still end with it), and TMPDIR. Under Landlock
// (picked by "auto" with this option) it needs root; under bubblewrap the
// server's own network namespace is the session's. New fails
// when it cannot run, saying why. Should the server die (killed,
// crashed), what it ran is lost (a job ends "lost", a one-shot call
// fails) and the next command starts a new one, at most 3 times a minute;
// past that, commands fail saying so. Closed by [CodeTools.Close].
func WithSessionSandbox() Option {
	return func(c *config) { c.bash.session = true }
}
