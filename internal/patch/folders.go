package patch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MakeParents creates the missing folders above rel (a clean path relative
// to root) with mode 0o755 (less the umask), one at a time through root,
// and returns those it created, outermost first, so that a rollback can
// remove them again.
func MakeParents(root *os.Root, rel string) ([]string, error) {
	dir := filepath.Dir(rel)
	if dir == "." || dir == "" {
		return nil, nil
	}
	var created []string
	parts := strings.Split(filepath.ToSlash(dir), "/")
	for i := range parts {
		sub := filepath.FromSlash(strings.Join(parts[:i+1], "/"))
		err := root.Mkdir(sub, 0o755)
		switch {
		case err == nil:
			created = append(created, sub)
		case errors.Is(err, fs.ErrExist):
			// already there: os.Root reports a file in the way when the
			// write opens through it
		default:
			return created, err
		}
	}
	return created, nil
}
