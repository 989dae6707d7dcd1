// Package atomicfile writes files atomically inside an [os.Root]: the data
// goes to a temporary file in the same folder, which is synced to disk and
// then renamed over the target, so a reader sees either the old content or
// the new one, never a mix, and a crash never leaves a half-written file.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit/internal/fsmode"
)

// ErrNotRegular is wrapped by the error for a name that exists and is not
// a regular file (a folder, a named pipe, a socket, a device): WriteFile
// replaces regular files only.
var ErrNotRegular = errors.New("not a regular file")

// keepBits are the mode bits carried over from a file being replaced.
const keepBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// tempPrefix starts the name of every temporary file. The name does not
// repeat the target's (a name of up to 255 bytes, the usual limit, must
// stay writable): it is tempPrefix and 16 random hex digits, 21 bytes.
const tempPrefix = ".tmp-"

// testHookBeforeRename, when set by a test, runs between the temporary
// file's creation and its rename.
var testHookBeforeRename func()

// WriteFile writes data to name (relative to root) atomically. The folder
// must exist. An existing file keeps its mode; a new one is created with
// perm (less the umask). An existing name that is not a regular file (a
// folder, a named pipe, a socket, a device) is refused with an error
// wrapping [ErrNotRegular]. When name is a symbolic link, the link itself
// is replaced: resolve it first to write through it.
//
// The folder is opened once and the temporary file is created, renamed
// and, on any error, removed through that one handle: a folder renamed or
// swapped for a link during the write can neither strand the temporary
// file nor send the rename elsewhere.
func WriteFile(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	dir, base := filepath.Split(name)
	if base == "" {
		return fmt.Errorf("%s ends with a separator, so it names a folder: %w", name, ErrNotRegular)
	}
	if dir == "" {
		return writeIn(root, name, base, data, perm)
	}
	d, err := root.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open folder: %w", err)
	}
	defer d.Close()
	return writeIn(d, name, base, data, perm)
}

// writeIn writes base, a plain name in the folder d, atomically; name is
// the path the caller gave, for messages.
func writeIn(d *os.Root, name, base string, data []byte, perm fs.FileMode) (err error) {
	mode, chmod := perm, false
	if info, err := d.Stat(base); err == nil {
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is a %s: %w", name, fsmode.Name(info.Mode()), ErrNotRegular)
		}
		mode, chmod = info.Mode()&keepBits, true
	}
	var tmp string
	var f *os.File
	for range 10 {
		tmp = tempPrefix + randomSuffix()
		f, err = d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = d.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write temporary file: %w", err)
	}
	if chmod {
		// Mode bits the umask removed at creation, and setuid and friends.
		if err = f.Chmod(mode); err != nil {
			_ = f.Close()
			return fmt.Errorf("keep mode %v: %w", mode, err)
		}
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("sync temporary file: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close temporary file: %w", err)
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename()
	}
	if err = d.Rename(tmp, base); err != nil {
		return fmt.Errorf("rename temporary file: %w", err)
	}
	syncDir(d)
	return nil
}

// syncDir flushes the folder's entry for the renamed file, where the system
// supports it; a failure there does not undo the write.
func syncDir(d *os.Root) {
	f, err := d.Open(".")
	if err != nil {
		return
	}
	_ = f.Sync()
	_ = f.Close()
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
