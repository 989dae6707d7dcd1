//go:build linux && amd64

package sandbox

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On amd64 the reaper shares the server's memory (CLONE_VM) and is
// written in assembly (reaper_linux_amd64.s) that uses registers only,
// never the stack nor any memory but the reaperData it is given. A plain
// fork copied the server's page tables (a few MiB of heap), write-protected
// them (a TLB shootdown across the server's threads), made the server
// copy each page it wrote while the reaper lived and tore the copy down at
// the reaper's exit: about 0.6 ms of each command's start and end.
//
// Sharing memory with a process the command may signal is safe only if no
// process of the sandbox can read or write it (ptrace, /proc/pid/mem,
// process_vm_writev): that would write the server's memory. The kernel
// lets a process without capabilities trace another only if the
// other's real, effective and saved users are all its own and the memory
// is dumpable. The server made it not dumpable before its first command,
// but a change of user or group makes it dumpable again where
// fs.suid_dumpable says so (1), and one happens in every command's start
// when the host is root (the fork that execs it, sharing the memory too,
// becomes nobody). So when the host is root the reaper's real user only is
// nobody, which lets the command signal it; its effective and saved users
// stay root (with no capability, and only these instructions to run), so
// no process of nobody passes the check whatever the memory's flag. Under
// another user nothing changes users or groups after the server's start:
// the memory stays not dumpable. The reaper also makes it not dumpable
// again after its own change of group, and exits if that or the drop of
// its capabilities fails.

// cloneReaper makes the system call nr (clone3 or clone) with a1, a2 and
// a3; in the child it made it runs the reaper on d, never returning. (Not
// noescape: the reaper reads d for as long as it lives, so d must be on
// the heap, where nothing moves.)
func cloneReaper(nr, a1, a2, a3 uintptr, d *reaperData) (r1, errno uintptr)

// reaperStack is the stack every reaper is given. The reaper never uses
// it: it is there so that a stray push lands here, never on a goroutine's
// stack.
var reaperStack [64]uint64

// forkReaperRaw is forkReaper's fork.
//
//go:nocheckptr
func forkReaperRaw(rf *reaperFork) (int, error) {
	rf.pidfd = -1
	stack, size := uintptr(unsafe.Pointer(&reaperStack)), unsafe.Sizeof(reaperStack)
	rf.args = cloneArgs{flags: unix.CLONE_VM | unix.CLONE_PIDFD, pidfd: uint64(uintptr(unsafe.Pointer(&rf.pidfd))),
		exitSignal: uint64(unix.SIGCHLD), stack: uint64(stack), stackSize: uint64(size)}
	if _, _, e := syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&rf.data.all)), uintptr(unsafe.Pointer(&rf.old)), 8, 0, 0); e != 0 {
		return -1, fmt.Errorf("block signals: %w", e)
	}
	_, e := cloneReaper(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&rf.args)), unsafe.Sizeof(rf.args), 0, &rf.data)
	if e == uintptr(unix.ENOSYS) {
		// clone's second argument is the stack's top, its third where
		// CLONE_PIDFD writes.
		_, e = cloneReaper(unix.SYS_CLONE, unix.CLONE_VM|unix.CLONE_PIDFD|uintptr(unix.SIGCHLD), stack+size, uintptr(unsafe.Pointer(&rf.pidfd)), &rf.data)
	}
	_, _, _ = syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&rf.old)), 0, 8, 0, 0)
	switch {
	case e == uintptr(unix.ENOSYS):
		return -1, errNoClone3
	case e != 0:
		return -1, fmt.Errorf("fork the reaper: %w", syscall.Errno(e))
	}
	return int(rf.pidfd), nil
}
