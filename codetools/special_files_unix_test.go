//go:build unix

package codetools

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// mksocket binds a Unix socket at path, closed when the test ends.
func mksocket(t testing.TB, path string) error {
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	t.Cleanup(func() { _ = l.Close() })
	return nil
}

// mkchardev makes path a character device like /dev/null (major 1, minor
// 3 on Linux; mknod needs privileges, so it may fail).
func mkchardev(path string) error {
	return unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
}
