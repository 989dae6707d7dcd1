//go:build unix

package dbos

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// fileLock is an flock: the kernel releases it when the process dies.
type fileLock struct{ f *os.File }

func (l fileLock) release() error { return l.f.Close() }

// lockFile takes an exclusive flock on path, or returns inUse.
func lockFile(path string, inUse error) (executorLock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, storeFileMode)
	if err != nil {
		return nil, fmt.Errorf("%w: opening the executor lock %s: %w", ErrEngine, path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, inUse
		}
		return nil, fmt.Errorf("%w: locking %s: %w", ErrEngine, path, err)
	}
	return fileLock{f}, nil
}
