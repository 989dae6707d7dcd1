// Package jobs runs processes that outlive the call that started them:
// codetools' background jobs (bash's run_in_background, job_output,
// job_list, job_kill) and interactive terminals (exec_command,
// write_stdin). It is an engine: the tools, their options and their
// answers stay in codetools; other tools (a persistent shell session)
// can build on the same [Table] and [Job].
//
// A [Table] holds the jobs of one CodeTools. [Table.Start] runs a command
// prepared by internal/sandbox (so a job is contained, and confined, as a
// one-shot bash call is) with its output on a pipe (standard error on a
// second one with Spec.SplitStderr, read apart in a ring of its own as
// Chunk.Err, the log holding both), or on a pseudo-terminal
// (creack/pty) when Spec.TTY is set. Every byte of output goes to three
// places, all bounded: a ring of the latest [Limits].RingBytes in memory,
// from which [Job.Read] returns what was not read yet (and how much of it
// fell out of memory); a log file (a proc.SpillFile capped at
// Limits.LogBytes: the head as written and a ring of the latest bytes,
// put in order when the job ends) that the model may read or grep; and,
// for a terminal, a terminal emulator (charmbracelet/x/vt), so that
// [Job.Screen] returns what a full-screen program shows, as text.
//
// # Ids
//
// A job's id is never given twice in a process: one counter serves every
// table (ids.go). It starts at a random point of [1000, 8001000), so ids
// are 4 to 7 digits, short enough for a model to type, and an id kept
// from another process (one before a restart, a replica) falls in this
// process's range only by a chance of about (jobs of both) in 8 million;
// outside it, [Table.Get] answers ErrJobLost, never another job
// (TestIDsAreUniqueBeyondTheProcess). A strict guarantee across processes
// would need state on disk shared by them; none is kept.
//
// # Ending every process
//
// A job's processes are supervised by internal/proc's guard, as bash's
// are: contained (the init of a PID namespace), killing the job ends every
// process it started, and a job ends when its command does, taking what it
// forked with it (a daemon included). A job ends at the latest when
// [Job.Kill] is called, when it has run Limits.MaxLifetime, when a
// terminal was neither read nor written for Limits.IdleTimeout, at
// [Table.Close] (which returns once every process is gone), and with the
// host: the helper that is the init of its namespace has a parent-death
// signal (SIGKILL), so a host killed with SIGKILL leaves no job running
// (TestHostKilledLeavesNoJob). Without a PID namespace (no user namespaces
// and not root) the /proc scan ends them on Kill and Close, but a
// SIGKILLed host cannot: the tools' descriptions say what holds.
//
// # Bounds
//
// MaxJobs jobs at most (ended ones count until forgotten, oldest first,
// to make room): Start fails with ErrTooManyJobs when all are running.
// Memory per job: RingBytes at most (it grows as output comes) plus 32 KiB
// of read buffer (twice both with SplitStderr), and for a terminal that went full-screen the emulator
// (about 4.5 MiB, made only then). Measured (BenchmarkIdleMemory, 16 idle
// each): about 3 KiB of host heap per idle job or terminal, and 9-11 MiB
// of resident memory in its processes (the helper, the shell). From output
// to a waiting Read (BenchmarkOutputToRead): under a millisecond to a few
// on a loaded machine, plus the 100 ms pause Read waits for a burst to end. Disk: LogBytes per log,
// whose retention (age, count) is the spill files' (codetools'
// WithBashSpillRetention), removed by Close.
package jobs
