//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// filterSockets installs a seccomp filter on the calling thread (every
// backend runs it, bubblewrap included): socket() fails with EACCES for
// every family but those the policy needs, and io_uring (which can open
// sockets without socket()) is refused. With the network open the families
// are Unix, IPv4, IPv6 and netlink (the resolver's); without it only Unix
// when allowUnix (under bubblewrap no host socket file is visible), else
// none (Landlock does not guard a socket file such as Docker's;
// socketpair still works). Never AF_VSOCK, AF_PACKET or the others: a
// vsock reaches the hypervisor whatever the network namespace.
func filterSockets(noNetwork, allowUnix bool) error {
	var arch, sysSocket uint32
	switch runtime.GOARCH {
	case "amd64":
		arch, sysSocket = 0xc000003e, 41 // AUDIT_ARCH_X86_64
	case "arm64":
		arch, sysSocket = 0xc00000b7, 198 // AUDIT_ARCH_AARCH64
	default:
		return fmt.Errorf("%w: no seccomp socket filter for %s", ErrUnavailable, runtime.GOARCH)
	}
	var families []uint32
	switch {
	case !noNetwork:
		families = []uint32{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}
	case allowUnix:
		families = []uint32{unix.AF_UNIX}
	}
	prog := socketProgram(arch, sysSocket, families)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// socketProgram returns the BPF program of filterSockets.
func socketProgram(arch, sysSocket uint32, families []uint32) []unix.SockFilter {
	const (
		sysIOUringSetup = 425
		offNr           = 0
		offArch         = 4
		offArg0         = 16 // args[0], low 32 bits (little-endian)
		retAllow        = unix.SECCOMP_RET_ALLOW
		retDeny         = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		retKill         = unix.SECCOMP_RET_KILL_PROCESS
	)
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
	}
	n := uint8(len(families))
	// Layout: header (0-7), the family tests (8 .. 8+n-1), deny (8+n),
	// allow (9+n). Jumps count from the next instruction.
	prog := []unix.SockFilter{
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),                  // 0
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, arch, 1, 0),              // 1
		stmt(unix.BPF_RET|unix.BPF_K, retKill),                              // 2: another ABI (x32 is below): nothing to allow
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),                    // 3
		jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, 0x40000000, 3+n, 0),      // 4: x32 system calls -> deny
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysIOUringSetup, 2+n, 0), // 5 -> deny
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, sysSocket, 0, 2+n),       // 6: socket() -> 7, else allow
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArg0),                  // 7
	}
	for i, f := range families { // 8+i: to allow (9+n) is n-i away
		prog = append(prog, jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, f, n-uint8(i), 0))
	}
	return append(prog,
		stmt(unix.BPF_RET|unix.BPF_K, retDeny),  // 8+n
		stmt(unix.BPF_RET|unix.BPF_K, retAllow), // 9+n
	)
}
