// Package proc supervises the commands bash runs: it ends every process a
// call started, captures the output in bounded memory, and keeps what does
// not fit in a capped spill file. It is codetools' engine for bash; the
// tool (its options, description, Display and errors) stays in codetools.
//
// # Ending every process
//
// [NewGuard] picks how a call's processes are ended:
//
//   - Contained (on Linux, as root or where user namespaces are allowed,
//     see internal/sandbox): the shell runs under the sandbox's helper, the
//     init of its own PID namespace, so killing the helper ends every
//     process of the call, however it detached (setsid, double fork, env
//     -i), and once it has exited none is left; it dies with the host too. The guard waits without reaping (waitid WNOWAIT), so that
//     the pid cannot be reused before the kill.
//   - The /proc scan (Linux, no namespace): the shell starts a new session
//     with a random token (LLMTOOLKIT_BASH_CALL) in its environment. A
//     process belongs to the call when it is the shell, is in its session
//     or group, descends from a process of the call, was seen descending
//     from one while the command ran (polled every 200 ms), still holds the
//     token, or holds the call's output pipe. It is killed through a pidfd
//     after checking its start time, so a reused pid is never hit. Only a
//     process that clears its environment, closes the pipe, leaves the
//     session and loses its parent between two polls escapes; KillAll
//     names the processes it could not kill (after 5 s) for the answer.
//   - Other Unix systems kill the process group (a process that leaves it
//     survives); other systems kill the command.
//
// [KillScope] is the sentence bash's description uses for the fallback of
// the system it runs on: the description claims only what holds.
//
// The goroutines of a call (output reader, exit waiter, process watcher)
// run under a [Trap], built on internal/guard: a panic is logged with its
// stack, becomes the call's error, and the command is still killed and
// reaped.
//
// # Output and spill files
//
// [Output] keeps everything a command writes while it is small (MaxBytes
// bytes, MaxLines lines), then only the tail in memory and the whole output
// in a [SpillFile]. Text gives the model the tail with a notice naming the
// file. A SpillFile is capped (16 MiB by default): it keeps the first half
// as written and a ring of the latest bytes, and on Finish rotates the ring
// in place and writes a marker where the middle was cut, so the file reads
// head, marker, tail.
//
// [SpillFiles] creates and removes the spill files of one CodeTools
// through a handle on their folder, opened once: a folder replaced by a
// link (a command can when it lies inside the root) is refused, never
// followed. Files are removed after the retention limits (age, count) and
// by Close; removals that fail are retried by Close and reported.
package proc
