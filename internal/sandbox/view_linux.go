//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// nobody is the user and group a sandboxed command runs as when the host
// is root: uid 0 without capabilities still owns /etc/shadow and every
// root-owned file, so the command must not be uid 0 at all.
const nobody = 65534

// A command that runs as nobody must still write the root and its
// temporary folder, and reach every folder it may read, whoever owns them
// and their parents. In the helper's private mount namespace, before it
// drops to nobody:
//
//   - the root and the temporary folder are mounted over themselves through
//     an idmapped mount that shows their owner's files as nobody's (files
//     the command creates are stored as the owner's: nothing on disk
//     changes owner);
//   - a parent folder nobody cannot search (a 0700 /root, a test's temporary
//     folder) is covered by a tmpfs holding only the way down to the
//     folders the policy names, mounted back in place.
//
// Then, for the init stage, every mount is made read-only except the
// writable folders: a chmod, chown or touch outside them fails with EROFS,
// which Landlock cannot refuse (it guards contents, not metadata).

// viewItem is a folder (or file) of the policy as the view is built.
type viewItem struct {
	path     string
	writable bool
	idmap    bool
	file     bool
	under    string // the blocked parent it lies under, "" when none
	fd       int    // the detached copy to mount, -1 when none is needed
}

// buildView builds the command's mount namespace: private mounts, a new
// /proc for a new PID namespace, and for a policy the view described above.
func buildView(c helperConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err) // never let a mount reach the host
	}
	if c.PIDNS {
		if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mount /proc: %w", err)
		}
	}
	if !c.Confine && c.Stage != "bwrap" {
		return nil
	}
	items := viewItems(c)
	defer func() {
		for _, it := range items {
			if it.fd >= 0 {
				unix.Close(it.fd)
			}
		}
	}()
	blocked := map[string]bool{}
	for _, it := range items {
		if it.under != "" {
			blocked[it.under] = true
		}
		// The init stage carves the writable folders out of the read-only
		// view: they must be mounts of their own.
		need := it.idmap || it.under != "" || (it.writable && c.Stage != "bwrap")
		if !need {
			continue
		}
		flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC)
		if !it.idmap {
			flags |= unix.AT_RECURSIVE
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, it.path, flags)
		if err != nil {
			return fmt.Errorf("copy the mount of %s: %w", it.path, err)
		}
		it.fd = fd
		if it.idmap {
			if err := idmap(fd, it.path); err != nil {
				return err
			}
		}
	}
	for _, a := range outermost(blocked) {
		if err := unix.Mount("tmpfs", a, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
			return fmt.Errorf("cover %s: %w", a, err)
		}
	}
	for _, it := range items {
		if it.fd < 0 {
			continue
		}
		if it.under != "" { // the tmpfs has only what is made here
			if err := mountPoint(it.path, it.file); err != nil {
				return err
			}
		}
		if err := unix.MoveMount(it.fd, "", unix.AT_FDCWD, it.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mount %s: %w", it.path, err)
		}
	}
	if c.Stage == "bwrap" { // bubblewrap builds its own read-only tree
		return nil
	}
	for _, h := range c.Hidden { // Policy.Hidden: covered by empty ones
		if err := hide(h); err != nil {
			return err
		}
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("read-only view: %w", err)
	}
	open := slices.Clone(c.Writable)
	if c.PIDNS {
		open = append(open, "/proc")
	}
	for _, w := range open {
		if err := unix.MountSetattr(unix.AT_FDCWD, w, unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("writable %s: %w", w, err)
		}
	}
	for _, h := range c.Hidden { // inside a writable folder: read-only again
		if err := unix.MountSetattr(unix.AT_FDCWD, h, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("read-only %s: %w", h, err)
		}
	}
	return nil
}

// hide covers path: a folder with an empty tmpfs, a file with /dev/null.
func hide(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("hide %s: %w", path, err) // it was there when the policy was read
	}
	if fi.IsDir() {
		err = unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0555,size=4k,nr_inodes=1")
	} else {
		err = unix.Mount("/dev/null", path, "", unix.MS_BIND, "")
	}
	if err != nil {
		return fmt.Errorf("hide %s: %w", path, err)
	}
	return nil
}

// viewItems lists the folders of the view, shortest path first (a folder
// is mounted before what lies inside it).
func viewItems(c helperConfig) []*viewItem {
	seen := map[string]*viewItem{}
	var items []*viewItem
	add := func(path string, writable bool) {
		if it, ok := seen[path]; ok {
			it.writable = it.writable || writable
			return
		}
		fi, err := os.Stat(path)
		if err != nil {
			return // optional folders that do not exist
		}
		it := &viewItem{path: path, writable: writable, file: !fi.IsDir(), fd: -1}
		if c.Drop {
			it.idmap = slices.Contains(c.IDMap, path)
			it.under = blockedParent(path)
		}
		seen[path] = it
		items = append(items, it)
	}
	for _, w := range c.Writable {
		add(w, true)
	}
	if c.Drop {
		for _, r := range c.Readable {
			add(r, false)
		}
	}
	slices.SortStableFunc(items, func(a, b *viewItem) int { return len(a.path) - len(b.path) })
	return items
}

// blockedParent returns the first parent folder of path that nobody cannot
// search, "" when it can reach path.
func blockedParent(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	dir := "/"
	for _, p := range parts[:max(len(parts)-1, 0)] {
		dir = filepath.Join(dir, p)
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err != nil {
			return ""
		}
		bit := uint32(0o001)
		switch {
		case st.Uid == nobody:
			bit = 0o100
		case st.Gid == nobody:
			bit = 0o010
		}
		if st.Mode&bit == 0 {
			return dir
		}
	}
	return ""
}

// outermost returns the folders of set that lie inside no other of them.
func outermost(set map[string]bool) []string {
	var out []string
	for a := range set {
		inside := false
		for b := range set {
			if a != b && strings.HasPrefix(a, b+"/") {
				inside = true
			}
		}
		if !inside {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// mountPoint makes path (a folder, or an empty file) in a covering tmpfs.
func mountPoint(path string, file bool) error {
	dir := path
	if file {
		dir = filepath.Dir(path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("mount point %s: %w", path, err)
	}
	if file {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return fmt.Errorf("mount point %s: %w", path, err)
		}
		f.Close()
	}
	return nil
}

// idmapNS holds the helper's user namespaces of idmap, by owner. The
// helper is a process of its own, single-threaded here: no lock.
var idmapNS = map[[2]uint32]int{}

// idmap makes the detached mount fd show the files of path's owner as
// nobody's, and store nobody's as the owner's.
func idmap(fd int, path string) error {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fmt.Errorf("idmap %s: %w", path, err)
	}
	key := [2]uint32{st.Uid, st.Gid}
	ns, ok := idmapNS[key]
	if !ok { // one per owner, kept for the helper's short life
		var err error
		if ns, err = userNamespace(int(st.Uid), int(st.Gid)); err != nil {
			return fmt.Errorf("idmap %s: %w", path, err)
		}
		idmapNS[key] = ns
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(ns)}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, attr); err != nil {
		return fmt.Errorf("%w: the file system of %s has no idmapped mounts, needed to let the command write it as an unprivileged user: %w", ErrUnavailable, path, err)
	}
	return nil
}

// userNamespace returns a descriptor of a new user namespace mapping uid
// and gid to nobody, made by a short-lived cat that holds it while it is
// opened.
func userNamespace(uid, gid int) (int, error) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		return -1, err
	}
	cmd := exec.Command(cat)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: nobody, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: nobody, Size: 1}},
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return -1, err
	}
	if err := cmd.Start(); err != nil {
		return -1, fmt.Errorf("user namespace: %w", err)
	}
	fd, openErr := unix.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	in.Close()
	_ = cmd.Wait()
	if openErr != nil {
		return -1, fmt.Errorf("user namespace: %w", openErr)
	}
	return fd, nil
}
