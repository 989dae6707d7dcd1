//go:build linux

package sandbox

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// A sandboxed command must never leave a setuid or setgid file, or a
// setgid folder, where it writes: as root, the idmapped root shows the
// host's files as nobody's, so nobody would be their owner and allowed to
// set the bits, and the disk would keep a root-owned setuid program any
// local user can run. Landlock and read-only mounts guard neither (the
// folders are writable), so the seccomp filter (seccomp_linux.go) refuses
// with EPERM every call whose mode argument holds S_ISUID or S_ISGID:
// chmod, fchmod, fchmodat, fchmodat2, mknod and mknodat always, open,
// openat and creat when they create (O_CREAT, O_TMPFILE: otherwise the
// mode is not used). mkdir and mkdirat are let through: Linux keeps only
// the permission and sticky bits of their mode (refusing them would only
// fail copies of setgid folders that cp and tar would otherwise make
// without the bit). openat2 carries its mode in a struct the filter
// cannot read: it fails with ENOSYS, and C libraries and Go use openat.
// io_uring, which reaches all of these without a system call of its own,
// is refused. Chown clears both bits of a file; the command has no
// capability (no CAP_FSETID to keep them, no CAP_SETFCAP for file
// capabilities).
//
// What else the idmapped root lets nobody do, checked on both backends:
// it owns the root owner's files there, so it may write, chmod (without
// the bits), utime and remove them, as the owner could; a write to a
// setuid file the host left there clears the bits (the kernel's rule for
// a writer without CAP_FSETID); chown to another user fails; a hard link
// to a setuid program of the system folders fails with EXDEV (the root is
// a mount of its own); file capabilities (security.capability) fail with
// EPERM; files of other owners are not its own (they are unmapped).
//
// What is left: a folder made inside a folder the host already made
// setgid inherits the bit (the kernel's rule; no filter can refuse it).
// It carries the group the host gave the parent, nothing more, and
// Cmd.Fallback says so when the root or the temporary folder is itself
// setgid (see setgidNote).

// modeRule is a system call that sets a mode from an argument: nr, the
// index of the mode argument, and of the flags that say whether it
// creates (-1: it always applies the mode).
type modeRule struct {
	nr    uint32
	mode  int
	flags int
}

// creatingFlags are the open flags under which the mode argument is used:
// O_CREAT and __O_TMPFILE (O_TMPFILE without O_DIRECTORY).
const creatingFlags = unix.O_CREAT | (unix.O_TMPFILE &^ unix.O_DIRECTORY)

var modeRulesAMD64 = []modeRule{
	{nr: 2, mode: 2, flags: 1},    // open
	{nr: 85, mode: 1, flags: -1},  // creat
	{nr: 257, mode: 3, flags: 2},  // openat
	{nr: 90, mode: 1, flags: -1},  // chmod
	{nr: 91, mode: 1, flags: -1},  // fchmod
	{nr: 268, mode: 2, flags: -1}, // fchmodat
	{nr: 452, mode: 2, flags: -1}, // fchmodat2
	{nr: 133, mode: 1, flags: -1}, // mknod
	{nr: 259, mode: 2, flags: -1}, // mknodat
}

var modeRulesARM64 = []modeRule{
	{nr: 56, mode: 3, flags: 2},   // openat
	{nr: 52, mode: 1, flags: -1},  // fchmod
	{nr: 53, mode: 2, flags: -1},  // fchmodat
	{nr: 452, mode: 2, flags: -1}, // fchmodat2
	{nr: 33, mode: 2, flags: -1},  // mknodat
}

// setgidNote says which of the writable folders are setgid themselves,
// "" when none: the folders the command makes there inherit the bit.
func setgidNote(writable []string) string {
	var sg []string
	for _, w := range writable {
		if fi, err := os.Stat(w); err == nil && fi.IsDir() && fi.Mode()&os.ModeSetgid != 0 {
			sg = append(sg, w)
		}
	}
	if len(sg) == 0 {
		return ""
	}
	return "setgid folder " + strings.Join(sg, ", ") + ": the folders the command makes in it inherit S_ISGID (and its group)"
}

// joinNotes joins the non-empty notes of Cmd.Fallback with "; ".
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}
