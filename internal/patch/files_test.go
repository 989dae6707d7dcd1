package patch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/atomicfile"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

var errOutside = errors.New("outside the root")

// rootFiles is Files over a confine.Root, as codetools implements it
// (without its size and link rules).
type rootFiles struct{ root *confine.Root }

func (r rootFiles) Resolve(ctx context.Context, p string) (string, error) {
	rel, err := r.root.Canonical(ctx, "path", p, false)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("%s is the root", p)
	}
	return rel, nil
}

func (r rootFiles) Load(_ context.Context, p, rel string) (string, fs.FileMode, error) {
	if _, err := r.root.FS.Lstat(rel); errors.Is(err, fs.ErrNotExist) {
		return "", 0, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	f, info, err := r.root.Open(p, rel, confine.File)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	return string(data), info.Mode().Perm(), err
}

func (r rootFiles) Write(_ context.Context, p, rel, content string, perm fs.FileMode) ([]string, error) {
	created, err := MakeParents(r.root.FS, rel)
	if err != nil {
		return created, err
	}
	return created, atomicfile.WriteFile(r.root.FS, rel, []byte(content), perm)
}

func (r rootFiles) Remove(_ context.Context, p, rel string) error { return r.root.FS.Remove(rel) }

// newRoot makes a root folder inside a parent that also holds "outside",
// a folder the patches must never reach.
func newRoot(t testing.TB) (rootFiles, string, string) {
	t.Helper()
	parent := t.TempDir()
	dir := filepath.Join(parent, "root")
	outside := filepath.Join(parent, "outside")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644))
	fsroot, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { fsroot.Close() })
	return rootFiles{&confine.Root{FS: fsroot, Dir: dir, Outside: errOutside}}, dir, outside
}

// writeTree writes files (slash paths) and empty folders (paths ending in
// "/") under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			require.NoError(t, os.MkdirAll(full, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
}

// readTree reads every file under dir, and every folder (as "path/": "").
func readTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	}))
	return out
}
