// Package fsmode names the type of a file for error messages, the same way
// in every package that refuses special files.
package fsmode

import "io/fs"

// Name names the type of a file with mode m: "directory", "regular file",
// "named pipe", "socket", "character device", "device", "symbolic link",
// "irregular file", or the mode's own letters for anything else.
func Name(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "regular file"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeIrregular != 0:
		return "irregular file"
	}
	return "special file (" + m.Type().String() + ")"
}

// Short names the type of a file with mode m as a listing shows it: "file"
// for a regular file, "symlink" for a symbolic link, and the others as
// [Name] does, so that a listing and an error name a special file alike.
func Short(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return Name(m)
}
