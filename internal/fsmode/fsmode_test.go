package fsmode

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestName(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		fs.ModeDir | 0o755:                "directory",
		0o644:                             "regular file",
		fs.ModeNamedPipe:                  "named pipe",
		fs.ModeSocket:                     "socket",
		fs.ModeDevice | fs.ModeCharDevice: "character device",
		fs.ModeDevice:                     "device",
		fs.ModeSymlink:                    "symbolic link",
		fs.ModeIrregular:                  "irregular file",
	} {
		assert.Equal(t, want, Name(m), m.String())
	}
}

func TestShort(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		fs.ModeDir | 0o755:                "directory",
		0o644:                             "file",
		fs.ModeSymlink:                    "symlink",
		fs.ModeNamedPipe:                  "named pipe",
		fs.ModeSocket:                     "socket",
		fs.ModeDevice | fs.ModeCharDevice: "character device",
		fs.ModeDevice:                     "device",
		fs.ModeIrregular:                  "irregular file",
	} {
		assert.Equal(t, want, Short(m), m.String())
	}
}
