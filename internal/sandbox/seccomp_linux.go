//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// installFilter installs the sandbox's one seccomp filter on the calling
// thread (every backend runs it from the helper, bubblewrap included, so
// both decide in this one place):
//
//   - socket() fails with EACCES for every family but those the policy
//     needs. With the network open they are Unix, IPv4, IPv6 and netlink
//     (the resolver's); without it only Unix when allowUnix (under
//     bubblewrap no host socket file is visible), else none (Landlock does
//     not guard a socket file such as Docker's; socketpair still works).
//     Never AF_VSOCK, AF_PACKET or the others: a vsock reaches the
//     hypervisor whatever the network namespace.
//   - io_uring fails with EACCES: a ring opens, creates and chmods files
//     (and opens sockets) without the system calls this filter sees.
//   - every call that would give a file or folder a setuid or setgid bit
//     fails with EPERM (modebits_linux.go), and openat2, whose mode lies in
//     a struct seccomp cannot read, with ENOSYS (C libraries then use
//     openat).
func installFilter(noNetwork, allowUnix bool) error {
	a, ok := filterArchs[runtime.GOARCH]
	if !ok {
		return fmt.Errorf("%w: no seccomp filter for %s", ErrUnavailable, runtime.GOARCH)
	}
	var families []uint32
	switch {
	case !noNetwork:
		families = []uint32{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}
	case allowUnix:
		families = []uint32{unix.AF_UNIX}
	}
	prog, err := filterProgram(a, families)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// filterArch is what the filter needs to know of an architecture.
type filterArch struct {
	audit   uint32     // AUDIT_ARCH_*
	socket  uint32     // socket()'s number
	ioUring []uint32   // io_uring_setup, _enter, _register
	openat2 uint32     //
	modes   []modeRule // the calls that set a mode from an argument
}

var filterArchs = map[string]filterArch{
	"amd64": {audit: 0xc000003e, socket: 41, ioUring: []uint32{425, 426, 427}, openat2: 437, modes: modeRulesAMD64},
	"arm64": {audit: 0xc00000b7, socket: 198, ioUring: []uint32{425, 426, 427}, openat2: 437, modes: modeRulesARM64},
}

// filterProgram returns the BPF program of installFilter.
func filterProgram(a filterArch, families []uint32) ([]unix.SockFilter, error) {
	const (
		offNr   = 0
		offArch = 4
	)
	var p bpf
	p.ld(offArch)
	p.jeq(a.audit, "", "kill") // another ABI (x32 is below): nothing to allow
	p.ld(offNr)
	p.jump(unix.BPF_JGE, 0x40000000, "eacces", "") // x32 system calls
	for _, nr := range a.ioUring {
		p.jeq(nr, "eacces", "")
	}
	p.jeq(a.openat2, "enosys", "")
	for i, r := range a.modes {
		p.jeq(r.nr, fmt.Sprintf("mode%d", i), "")
	}
	p.jeq(a.socket, "socket", "allow")
	for i, r := range a.modes {
		p.label(fmt.Sprintf("mode%d", i))
		if r.flags >= 0 { // the mode counts only when the call creates
			p.ld(argLow(r.flags))
			p.jump(unix.BPF_JSET, creatingFlags, "", "allow")
		}
		p.ld(argLow(r.mode))
		p.jump(unix.BPF_JSET, unix.S_ISUID|unix.S_ISGID, "eperm", "allow")
	}
	p.label("socket")
	p.ld(argLow(0))
	for _, f := range families {
		p.jeq(f, "allow", "")
	}
	p.label("eacces")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))
	p.label("allow")
	p.ret(unix.SECCOMP_RET_ALLOW)
	p.label("eperm")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	p.label("enosys")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	p.label("kill")
	p.ret(unix.SECCOMP_RET_KILL_PROCESS)
	return p.assemble()
}

// argLow is the offset in struct seccomp_data of the low 32 bits of
// argument i (little-endian: amd64 and arm64).
func argLow(i int) uint32 { return 16 + 8*uint32(i) }

// bpf assembles a classic BPF program whose jumps name labels; "" is the
// next instruction.
type bpf struct {
	ins    []unix.SockFilter
	to     [][2]string // per instruction: the labels of jt and jf
	labels map[string]int
}

func (p *bpf) add(f unix.SockFilter, jt, jf string) {
	p.ins = append(p.ins, f)
	p.to = append(p.to, [2]string{jt, jf})
}

func (p *bpf) ld(off uint32) {
	p.add(unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}, "", "")
}

func (p *bpf) ret(k uint32) { p.add(unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k}, "", "") }

func (p *bpf) jump(op uint16, k uint32, jt, jf string) {
	p.add(unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k}, jt, jf)
}

func (p *bpf) jeq(k uint32, jt, jf string) { p.jump(unix.BPF_JEQ, k, jt, jf) }

func (p *bpf) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.ins)
}

// assemble resolves the jumps (forward only, at most 255 instructions).
func (p *bpf) assemble() ([]unix.SockFilter, error) {
	out := make([]unix.SockFilter, len(p.ins))
	for i, f := range p.ins {
		for j, name := range p.to[i] {
			if name == "" {
				continue
			}
			at, ok := p.labels[name]
			if !ok || at <= i || at-i-1 > 255 {
				return nil, fmt.Errorf("seccomp: bad jump from %d to %q", i, name)
			}
			if j == 0 {
				f.Jt = uint8(at - i - 1)
			} else {
				f.Jf = uint8(at - i - 1)
			}
		}
		out[i] = f
	}
	if len(out) > 0xffff {
		return nil, fmt.Errorf("seccomp: program too long")
	}
	return out, nil
}
