//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
)

// Bubblewrap is the bubblewrap backend; it runs only on Linux.
type Bubblewrap struct{}

// Landlock is the Landlock backend; it runs only on Linux.
type Landlock struct{}

// NewBubblewrap returns an error wrapping ErrUnavailable on this system.
func NewBubblewrap() (*Bubblewrap, error) {
	return nil, fmt.Errorf("%w: bubblewrap runs only on Linux, not %s", ErrUnavailable, runtime.GOOS)
}

// NewLandlock returns an error wrapping ErrUnavailable on this system.
func NewLandlock() (*Landlock, error) {
	return nil, fmt.Errorf("%w: Landlock runs only on Linux, not %s", ErrUnavailable, runtime.GOOS)
}

// Name returns "bubblewrap".
func (*Bubblewrap) Name() string { return "bubblewrap" }

// Command fails: no bubblewrap here.
func (*Bubblewrap) Command(Spec, Policy) (*Cmd, error) { _, err := NewBubblewrap(); return nil, err }

// Name returns "landlock".
func (*Landlock) Name() string { return "landlock" }

// Command fails: no Landlock here.
func (*Landlock) Command(Spec, Policy) (*Cmd, error) { _, err := NewLandlock(); return nil, err }

// Contain returns nil: no containment backend on this system.
func Contain() Backend { return nil }

// Contains reports false: no containment on this system.
func Contains() (bool, string) { return false, "no PID namespaces on " + runtime.GOOS }

// NewLoopbackNetwork fails: no network namespaces on this system.
func NewLoopbackNetwork() (*os.File, error) {
	return nil, fmt.Errorf("%w: no network namespaces on %s", ErrUnavailable, runtime.GOOS)
}
