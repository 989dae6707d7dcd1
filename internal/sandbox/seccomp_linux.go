//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denySockets installs a seccomp filter on the calling thread: socket()
// fails with EACCES for every family (Unix sockets included: Landlock does
// not guard a socket file such as Docker's; socketpair still works), and
// io_uring (which can open sockets without socket()) is refused. Landlock's
// network rules reach only TCP; this covers UDP, raw and the others.
func denySockets() error {
	var arch, sysSocket uint32
	switch runtime.GOARCH {
	case "amd64":
		arch, sysSocket = 0xc000003e, 41 // AUDIT_ARCH_X86_64
	case "arm64":
		arch, sysSocket = 0xc00000b7, 198 // AUDIT_ARCH_AARCH64
	default:
		return fmt.Errorf("%w: no seccomp network filter for %s", ErrUnavailable, runtime.GOARCH)
	}
	const (
		sysIOUringSetup = 425
		offNr           = 0
		offArch         = 4
		retAllow        = unix.SECCOMP_RET_ALLOW
		retDeny         = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		retKill         = unix.SECCOMP_RET_KILL_PROCESS
	)
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
	}
	prog := []unix.SockFilter{
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, arch, 1, 0),
		stmt(unix.BPF_RET|unix.BPF_K, retKill), // another ABI (x32 is below): nothing to allow
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
		jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, 0x40000000, 3, 0), // x32 system calls
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysIOUringSetup, 2, 0),
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysSocket, 1, 0),
		stmt(unix.BPF_RET|unix.BPF_K, retAllow),
		stmt(unix.BPF_RET|unix.BPF_K, retDeny),
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}
