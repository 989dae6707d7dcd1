//go:build linux && !amd64

package sandbox

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Here the reaper is a plain fork (no CLONE_VM): its copy of the server's
// memory costs the fork its page tables, and the server a copy of each
// page it writes while the reaper lives (amd64 shares the memory instead:
// reaper_linux_amd64.go), but Go code may run in it on the copied stack.

// forkReaperRaw is forkReaper's fork.
//
//go:noinline
//go:norace
//go:nocheckptr
func forkReaperRaw(rf *reaperFork) (int, error) {
	rf.pidfd = -1
	rf.args = cloneArgs{flags: unix.CLONE_PIDFD, pidfd: uint64(uintptr(unsafe.Pointer(&rf.pidfd))), exitSignal: uint64(unix.SIGCHLD)}
	if _, _, e := syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&rf.data.all)), uintptr(unsafe.Pointer(&rf.old)), 8, 0, 0); e != 0 {
		return -1, fmt.Errorf("block signals: %w", e)
	}
	pid, _, e := syscall.RawSyscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&rf.args)), unsafe.Sizeof(rf.args), 0)
	if e == unix.ENOSYS && runtime.GOARCH == "arm64" {
		// clone's third argument is where CLONE_PIDFD writes there.
		pid, _, e = syscall.RawSyscall6(unix.SYS_CLONE, unix.CLONE_PIDFD|uintptr(unix.SIGCHLD), 0, uintptr(unsafe.Pointer(&rf.pidfd)), 0, 0, 0)
	}
	if e == 0 && pid == 0 {
		reaperMain(rf) // the copy: never returns
	}
	_, _, _ = syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&rf.old)), 0, 8, 0, 0)
	switch {
	case e == unix.ENOSYS:
		return -1, errNoClone3
	case e != 0:
		return -1, fmt.Errorf("fork the reaper: %w", e)
	}
	return int(rf.pidfd), nil
}

// reaperMain is the reaper, in the fork's copy of the server: only raw
// system calls, on the stack the fork copied (nosplit: it must not grow).
//
//go:nosplit
//go:norace
//go:nocheckptr
func reaperMain(rf *reaperFork) {
	for sig := uintptr(1); sig <= 64; sig++ {
		syscall.RawSyscall6(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&rf.data.dfl)), 0, 8, 0, 0)
	}
	syscall.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0)
	if rf.data.drop != 0 {
		syscall.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0)
		syscall.RawSyscall(unix.SYS_SETRESGID, nobody, nobody, nobody)
		syscall.RawSyscall(unix.SYS_SETRESUID, nobody, nobody, nobody)
	}
	syscall.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&rf.data.capHdr)), uintptr(unsafe.Pointer(&rf.data.capNone)), 0)
	// Last: closing every descriptor closes the ready pipe's write end,
	// which tells the server the reaper is set up (see forkReaper).
	syscall.RawSyscall(unix.SYS_CLOSE_RANGE, 0, 0xffffffff, 0)
	for {
		for { // every zombie the namespace handed over
			pid, _, e := syscall.RawSyscall6(unix.SYS_WAIT4, ^uintptr(0), 0, unix.WNOHANG|unix.WALL, 0, 0, 0)
			if e == unix.EINTR {
				continue
			}
			if e != 0 || pid == 0 {
				break
			}
		}
		sig, _, e := syscall.RawSyscall6(unix.SYS_RT_SIGTIMEDWAIT, uintptr(unsafe.Pointer(&rf.data.all)), 0, 0, 8, 0, 0)
		if e == 0 && sig != uintptr(unix.SIGCHLD) {
			syscall.RawSyscall(unix.SYS_KILL, 2, sig, 0) // the command
		}
	}
}
