//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// NewLoopbackNetwork makes a network namespace holding only a loopback
// interface, up, and returns a handle on it ([Policy].Network's session
// form: the commands that join it reach each other on localhost and
// nothing else). Closing the handle frees it once no process is inside.
// It needs root (creating and joining a network namespace owned by the
// host's user namespace); otherwise it fails with ErrUnavailable.
func NewLoopbackNetwork() (*os.File, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: a network namespace shared by the commands needs root", ErrUnavailable)
	}
	type made struct {
		f   *os.File
		err error
	}
	ch := make(chan made, 1)
	go func() {
		// Only this thread enters the new namespace, and returns to the
		// host's before it is unlocked; if it cannot, it stays locked and
		// Go ends the thread with the goroutine.
		runtime.LockOSThread()
		host, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- made{nil, err}
			return
		}
		defer host.Close()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- made{nil, fmt.Errorf("%w: unshare the network: %w", ErrUnavailable, err)}
			return
		}
		ns, err := os.Open("/proc/thread-self/ns/net")
		if err == nil {
			err = loopbackUp()
		}
		if back := unix.Setns(int(host.Fd()), unix.CLONE_NEWNET); back != nil {
			if ns != nil {
				ns.Close()
			}
			ch <- made{nil, fmt.Errorf("back to the host's network: %w", back)}
			return
		}
		runtime.UnlockOSThread()
		if err != nil && ns != nil {
			ns.Close()
			ns = nil
		}
		ch <- made{ns, err}
	}()
	m := <-ch
	if m.err != nil {
		return nil, m.err
	}
	return m.f, nil
}

// loopbackUp sets the interface lo up in the calling thread's network
// namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}

// joinNetwork enters the network namespace open as fd (the helper, before
// it closes its inherited descriptors), then closes fd.
func joinNetwork(fd int) error {
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("join the session's network: %w", err)
	}
	return nil
}

var errNoSharedNetwork = errors.New("the backend cannot join a shared network namespace")
