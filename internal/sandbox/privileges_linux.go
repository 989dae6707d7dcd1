//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// dropPrivileges leaves the calling thread (and so the command it starts)
// no capability in any set, bounding and ambient included, and, when
// user is set (the host is root), the user and group nobody without
// supplementary groups: a command of a root host can neither remount a
// read-only folder nor read what only root may (/etc/shadow).
func dropPrivileges(user bool) error {
	if err := dropBounding(); err != nil {
		return err
	}
	if user {
		if err := dropUser(); err != nil {
			return err
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	return nil
}

// dropBounding empties this thread's bounding set (it needs CAP_SETPCAP,
// so it comes before the change of user).
func dropBounding() error {
	for c := 0; c <= 63; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	return nil
}

// dropUser makes the process nobody (every thread: Go applies set*id to
// all), which clears its permitted and effective capabilities.
func dropUser() error {
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("drop groups: %w", err)
	}
	if err := syscall.Setresgid(nobody, nobody, nobody); err != nil {
		return fmt.Errorf("become group nobody: %w", err)
	}
	if err := syscall.Setresuid(nobody, nobody, nobody); err != nil {
		return fmt.Errorf("become nobody: %w", err)
	}
	return nil
}
