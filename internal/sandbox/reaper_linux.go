//go:build linux

package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// A session's server gives each command a PID namespace of its own whose
// init is a reaper: a child of the server made by a bare clone (no exec,
// so it costs tens of microseconds where a Go helper costs ~11 ms and a
// shell ~1.5 ms) that runs only raw system calls: on amd64 in assembly,
// sharing the server's memory (reaper_linux_amd64.go), elsewhere in Go on
// a copy of it (reaper_fork_linux.go). The command is forked after it,
// into the same namespace (the server's thread unshares CLONE_NEWPID
// first), and is so its pid 2, the server's child: not an init, so a
// signal it sends itself (kill $$) acts as anywhere else, and Ctrl-C on a
// terminal reaches it. The reaper:
//
//   - keeps every signal blocked, with the default handlers (never the Go
//     runtime's: it must not run Go code), and takes them with
//     rt_sigtimedwait: SIGCHLD reaps every orphan the namespace hands it;
//     any other signal (kill 1 from inside) is passed on to pid 2, the
//     command, as the helper's init does;
//   - dies with the server (a parent-death signal), holds no descriptor
//     (the command's streams' ends stay the command's) and no capability.
//
// The server reaps the command, then kills the reaper: the end of a
// namespace's init kills whatever the command left behind, and the
// kernel returns the init's exit only once every process of it is gone.
// A kill of the command is a SIGKILL to the reaper (through its pidfd):
// the namespace ends at once, the command with it.

// cloneArgs is the kernel's struct clone_args in its first version (64
// bytes; every architecture lays it out alike).
type cloneArgs struct {
	flags, pidfd, childTID, parentTID, exitSignal, stack, stackSize, tls uint64
}

// reaperFork holds what a fork of the reaper reads and writes: on the
// heap, where nothing moves, since the kernel is given its addresses as
// integers.
type reaperFork struct {
	args  cloneArgs
	pidfd int32
	old   uint64     // the server thread's mask before the fork
	data  reaperData // what the reaper reads: never written after newReaperFork
}

// reaperData is what the reaper reads (reaper_linux_amd64.s reads it by
// the offsets go_asm.h gives).
type reaperData struct {
	all uint64 // every signal
	//lint:ignore U1000 on amd64 only the assembly reads it
	dfl    [4]uint64 // a struct sigaction with SIG_DFL and no flags
	capHdr [2]uint32 // version 3, this process
	//lint:ignore U1000 on amd64 only the assembly reads it
	capNone [6]uint32 // no capability: capset's two halves of effective, permitted, inheritable
	drop    uint32    // nonzero: the host is root: become nobody, as the command does (so that it may signal its init; on amd64 the real user only)
}

func newReaperFork(drop bool) *reaperFork {
	rf := &reaperFork{data: reaperData{all: ^uint64(0), capHdr: [2]uint32{unix.LINUX_CAPABILITY_VERSION_3, 0}}}
	if drop {
		rf.data.drop = 1
	}
	return rf
}

// errNoClone3 is the error of a kernel (or a seccomp filter) without
// clone3 where clone cannot stand in for it.
var errNoClone3 = errors.New("clone3 is refused here")

// forkReaper forks the reaper from the calling thread, whose children's
// PID namespace (unshared by the caller) it becomes the init of, and
// returns a pidfd on it once it is set up (its user that of the command,
// which may then signal it). Signals are blocked on the thread across the
// fork, so that the copy never runs a Go signal handler.
func forkReaper(rf *reaperFork) (int, error) {
	var ready [2]int
	if err := unix.Pipe2(ready[:], unix.O_CLOEXEC); err != nil {
		return -1, fmt.Errorf("fork the reaper: %w", err)
	}
	pidfd, err := forkReaperRaw(rf)
	unix.Close(ready[1])
	if err == nil {
		var b [1]byte
		for {
			if _, e := unix.Read(ready[0], b[:]); !errors.Is(e, unix.EINTR) {
				break // EOF: the reaper closed its descriptors, the last step of its setup
			}
		}
	}
	unix.Close(ready[0])
	return pidfd, err
}

// killReaper ends a command's namespace: SIGKILL to its init.
func killReaper(pidfd int) { _ = unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0) }

// waitReaper reaps the reaper, which the kernel lets happen only once
// every process of its namespace is gone, and closes its pidfd.
func waitReaper(pidfd int) {
	for {
		err := unix.Waitid(unix.P_PIDFD, pidfd, nil, unix.WEXITED, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	_ = unix.Close(pidfd)
}
