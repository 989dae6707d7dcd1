//go:build linux && amd64

package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// legacyModeTries are the mode-setting calls x86-64 keeps beside the *at
// ones (arm64 has only those).
func legacyModeTries() []modeTry {
	call := func(nr uintptr, path string, args ...uintptr) error {
		p, _ := unix.BytePtrFromString(path)
		a := append([]uintptr{uintptr(unsafe.Pointer(p))}, args...)
		for len(a) < 3 {
			a = append(a, 0)
		}
		r, _, errno := unix.Syscall(nr, a[0], a[1], a[2])
		if errno != 0 {
			return errno
		}
		if nr == unix.SYS_OPEN || nr == unix.SYS_CREAT {
			unix.Close(int(r))
		}
		return nil
	}
	return []modeTry{
		{"chmod", false, func(path string, m uint32) error {
			if err := call(unix.SYS_CREAT, path, 0o644); err != nil {
				return err
			}
			return call(unix.SYS_CHMOD, path, uintptr(m))
		}},
		{"open-creat", false, func(path string, m uint32) error {
			return call(unix.SYS_OPEN, path, unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, uintptr(m))
		}},
		{"creat", false, func(path string, m uint32) error { return call(unix.SYS_CREAT, path, uintptr(m)) }},
		{"mkdir", true, func(path string, m uint32) error { return call(unix.SYS_MKDIR, path, uintptr(m)) }},
		{"mknod", false, func(path string, m uint32) error { return call(unix.SYS_MKNOD, path, uintptr(unix.S_IFREG|m), 0) }},
	}
}
