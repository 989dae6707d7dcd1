package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TreeLines is the independent walker the checkpoint tests compare a
// restored tree with: filepath.WalkDir, plainly, over everything but .git
// folders, one sorted line per entry (its quoted path, type, permission
// bits with setuid, setgid and sticky, and a file's SHA-256 or a link's
// target). Two trees are the same when their lines are.
func TreeLines(tb testing.TB, root string) string {
	tb.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		m := info.Mode()
		line := fmt.Sprintf("%q %s %o", rel, m.Type(), m.Perm()|m&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		switch {
		case m.IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := sha256.Sum256(data)
			line += " " + hex.EncodeToString(s[:])
		case m&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + target
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		tb.Fatalf("walking %s: %v", root, err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TreeDigest is the SHA-256 of [TreeLines], in hex.
func TreeDigest(tb testing.TB, root string) string {
	tb.Helper()
	s := sha256.Sum256([]byte(TreeLines(tb, root)))
	return hex.EncodeToString(s[:])
}

// WriteFiles writes each file of files (slash-separated paths below root
// to contents), 0644, creating their folders 0755.
func WriteFiles(tb testing.TB, root string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
