//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock access rights, by the ABI version that brought them.
const (
	llRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llABI1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
)

// landlockABI returns the kernel's Landlock ABI version, 0 without Landlock.
var landlockABI = sync.OnceValue(func() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
})

// fsRights returns every file-system right the ABI knows.
func fsRights(abi int) uint64 {
	r := uint64(llABI1)
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return r
}

// restrictSelf applies Landlock to the calling thread (and what it starts):
// the folders in readable readable and executable, those in writable
// writable, and the harmless devices (never a disk); without network, TCP bind and connect
// denied (ABI 4) and abstract Unix sockets outside the sandbox unreachable
// (ABI 6). Signals to processes outside the sandbox are denied (ABI 6).
func restrictSelf(readable, writable []string, noNetwork bool) error {
	abi := landlockABI()
	if abi < 1 {
		return fmt.Errorf("%w: the kernel has no Landlock", ErrUnavailable)
	}
	all := fsRights(abi)
	attr := rulesetAttr{handledFS: all}
	if abi >= 4 && noNetwork {
		attr.handledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		attr.scoped = unix.LANDLOCK_SCOPE_SIGNAL
		if noNetwork {
			attr.scoped |= unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		}
	}
	size := unsafe.Sizeof(attr)
	if abi < 4 {
		size = unsafe.Offsetof(attr.handledNet) // older kernels know only handledFS
	} else if abi < 6 {
		size = unsafe.Offsetof(attr.scoped)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock: create ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)

	dev := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE)
	if abi >= 3 {
		dev |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		dev |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	rules := []struct {
		path     string
		access   uint64
		optional bool
	}{{"/proc", llRead, false}}
	for _, r := range readable {
		rules = append(rules, struct {
			path     string
			access   uint64
			optional bool
		}{r, llRead, true})
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"} {
		rules = append(rules, struct {
			path     string
			access   uint64
			optional bool
		}{d, dev, true})
	}
	for _, w := range writable {
		rules = append(rules, struct {
			path     string
			access   uint64
			optional bool
		}{w, all, false})
	}
	for _, r := range rules {
		if err := addPathRule(ruleset, r.path, r.access); err != nil {
			if r.optional && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return err
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("landlock: restrict self: %w", errno)
	}
	return nil
}

func addPathRule(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("landlock: open %s: %w", path, &os.PathError{Op: "open", Path: path, Err: err})
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock: stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR { // only file rights apply to a file
		access &= unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
			unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: rule for %s: %w", path, errno)
	}
	return nil
}

// Landlock is the backend that restricts the helper with Landlock (file
// contents, TCP) and seccomp (other sockets, mode bits), in new PID,
// mount, IPC, UTS and network namespaces where the kernel allows them; in
// the mount namespace every folder but the writable ones is read-only,
// which refuses the metadata writes (chmod, chown, touch) Landlock cannot.
type Landlock struct{}

// NewLandlock returns the Landlock backend, or an error wrapping
// ErrUnavailable when the kernel lacks Landlock.
func NewLandlock() (*Landlock, error) {
	if landlockABI() < 1 {
		return nil, fmt.Errorf("%w: landlock: the kernel has no Landlock (Linux 5.13 or later, with lsm=landlock)", ErrUnavailable)
	}
	return &Landlock{}, nil
}

// Name returns "landlock".
func (*Landlock) Name() string { return "landlock" }

// Command prepares spec to run under p.
func (l *Landlock) Command(spec Spec, p Policy) (*Cmd, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if p.Mode == Off {
		return helperCommand(spec, helperConfig{}, false, l.Name(), helperFiles{})
	}
	tmp, err := absClean(p.Tmp)
	if err != nil {
		return nil, fmt.Errorf("%w: temporary folder: %w", ErrBadPolicy, err)
	}
	root, err := absClean(p.Root)
	if err != nil {
		return nil, fmt.Errorf("%w: root: %w", ErrBadPolicy, err)
	}
	c := helperConfig{Confine: true, Landlock: true, Readable: readableOf(spec, p, root), Writable: []string{tmp},
		NoNetwork: !p.Network, IDMap: []string{root, tmp}}
	c.Hidden, _ = hiddenOf(p)
	if p.Mode == WorkspaceWrite {
		c.Writable = append(c.Writable, root)
	}
	var link *proxyLink
	files := helperFiles{}
	if p.Proxy != nil {
		// The command's namespace holds only a loopback, where the
		// proxy's listener is: it is the boundary, so TCP and Internet
		// sockets are allowed inside it.
		if link, err = newProxyLink(p.Proxy); err != nil {
			return nil, err
		}
		files.proxy, c.NoNetwork, c.LoopUp = link.theirs, false, p.Loopback == nil
	}
	var cmd *Cmd
	if p.Loopback != nil && !p.Network {
		// The shared namespace holds only a loopback: it is the boundary,
		// so TCP and Internet sockets are allowed inside it.
		c.NoNetwork, files.net = false, p.Loopback
		cmd, err = helperCommand(spec, c, false, l.Name(), files)
	} else {
		cmd, err = helperCommand(spec, c, !p.Network, l.Name(), files)
	}
	if err == nil && link != nil && p.Loopback == nil && cmd.SysProcAttr.Cloneflags&unix.CLONE_NEWNET == 0 {
		err = fmt.Errorf("%w: landlock: a proxy needs a network namespace of the command's own: %s", ErrUnavailable, cmd.Fallback)
	}
	if err != nil {
		if link != nil {
			link.mine.Close()
			link.theirs.Close()
		}
		return nil, err
	}
	cmd.proxy = link
	cmd.Fallback = joinNotes(cmd.Fallback, setgidNote(c.Writable))
	return cmd, nil
}

// rulesetAttr is the kernel's struct landlock_ruleset_attr as of ABI 6,
// declared here so that its layout does not follow the field names of a
// golang.org/x/sys version (they were renamed in v0.49.0).
type rulesetAttr struct {
	handledFS  uint64 // handled_access_fs
	handledNet uint64 // handled_access_net (ABI 4)
	scoped     uint64 // scoped (ABI 6)
}
