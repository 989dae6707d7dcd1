package dbos

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// storeFileMode is the mode of the files an Engine creates for a SQLite
// system database (the database, and the executor lock beside it): they
// hold the runs' conversations and their sensitive argument values (see
// the package doc, "What the database holds"), so only the owner may read
// them, whatever the umask. SQLite gives its -wal and -shm files the mode
// of the database file.
const storeFileMode fs.FileMode = 0o600

// sqlitePath returns the file of a "sqlite:" system database URL, as DBOS
// reads it (sqlite:PATH, sqlite:///PATH, sqlite:file:PATH?query), and
// false for PostgreSQL or an in-memory database.
func sqlitePath(databaseURL string) (string, bool) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "sqlite", "sqlite3":
	default:
		return "", false
	}
	p := u.Opaque
	if p == "" {
		p = u.Path
	}
	if strings.HasPrefix(p, "file:") {
		if fu, err := url.Parse(p); err == nil {
			p = fu.Opaque
			if p == "" {
				p = fu.Path
			}
		}
	}
	p, _, _ = strings.Cut(p, "?")
	if p == "" || strings.HasPrefix(p, ":memory:") {
		return "", false
	}
	return p, true
}

// prepareStoreFile creates the SQLite system database file of
// databaseURL with storeFileMode (and its folder, 0700, when missing)
// before DBOS opens it, so that neither it nor its -wal and -shm files are
// ever readable by others. A file that exists keeps its mode; one readable
// by others is logged as a warning.
func prepareStoreFile(databaseURL string, log *slog.Logger) error {
	path, ok := sqlitePath(databaseURL)
	if !ok {
		return nil
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating the folder of the system database %s: %w", path, err)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, storeFileMode)
	if errors.Is(err, fs.ErrExist) {
		if info, serr := os.Stat(path); serr == nil && info.Mode().Perm()&0o077 != 0 {
			log.Warn("durable/dbos: the system database is readable by others; it holds the runs' conversations and sensitive arguments: chmod 600 it (and its -wal and -shm files)",
				slog.String("path", path), slog.String("mode", info.Mode().Perm().String()))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating the system database %s: %w", path, err)
	}
	// O_CREATE's mode is masked by the umask, which can only remove bits:
	// chmod makes it exactly storeFileMode.
	return errors.Join(f.Chmod(storeFileMode), f.Close())
}
