package codetools

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// readIgnoreFileAt reads the ignore file name of the open folder dirfd
// under the rules of ignore_files.go; rel names it in errors. O_NOFOLLOW
// refuses a symbolic link, O_NONBLOCK keeps a named pipe swapped in after
// the listing from blocking the open, and the type is checked on the
// opened descriptor.
func readIgnoreFileAt(dirfd int, name, rel string) ([]byte, error) {
	fd, err := openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%s %w", rel, errIgnoreLink)
		}
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	f := rawFile(fd)
	defer f.Close()
	var st unix.Stat_t
	for {
		err = unix.Fstat(fd, &st)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: fstat: %w", rel, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s %w", rel, errIgnoreNotRegular)
	}
	return readIgnoreData(f, rel)
}
