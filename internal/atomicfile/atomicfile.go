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
)

// keepBits are the mode bits carried over from a file being replaced.
const keepBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// WriteFile writes data to name (relative to root) atomically. The folder
// must exist. An existing file keeps its mode; a new one is created with
// perm (less the umask). When name is a symbolic link, the link itself is
// replaced: resolve it first to write through it.
func WriteFile(root *os.Root, name string, data []byte, perm fs.FileMode) (err error) {
	mode, chmod := perm, false
	if info, err := root.Stat(name); err == nil {
		if info.IsDir() {
			return fmt.Errorf("%s is a directory", name)
		}
		mode, chmod = info.Mode()&keepBits, true
	}
	dir, base := filepath.Split(name)
	var tmp string
	var f *os.File
	for range 10 {
		tmp = filepath.Join(dir, "."+base+".tmp-"+randomSuffix())
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = root.Remove(tmp)
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
	if err = root.Rename(tmp, name); err != nil {
		return fmt.Errorf("rename temporary file: %w", err)
	}
	syncDir(root, dir)
	return nil
}

// syncDir flushes the folder's entry for the renamed file, where the system
// supports it; a failure there does not undo the write.
func syncDir(root *os.Root, dir string) {
	if dir == "" {
		dir = "."
	}
	d, err := root.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
