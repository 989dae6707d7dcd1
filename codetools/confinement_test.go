package codetools

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outsideSetup returns tools over dir/root and a secret file in dir/outside.
func outsideSetup(t testing.TB) (root, outside string, c *CodeTools) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET\n"), 0o644))
	c, err = New(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return root, outside, c
}

// fileTools are the tools that take a file path, with valid other arguments.
var fileTools = map[string]map[string]any{
	"read_file":      {},
	"write_file":     {"content": "PWNED"},
	"edit_file":      {"oldText": "SECRET", "newText": "PWNED"},
	"multi_edit":     {"edits": []any{map[string]any{"oldText": "SECRET", "newText": "PWNED"}}},
	"append_to_file": {"content": "PWNED"},
	"list_directory": {},
	"tree":           {},
	"file_info":      {},
}

func withPath(args map[string]any, p string) map[string]any {
	out := map[string]any{"path": p}
	for k, v := range args {
		out[k] = v
	}
	return out
}

func TestPathsRefused(t *testing.T) {
	t.Parallel()
	root, outside, c := outsideSetup(t)
	for name, args := range fileTools {
		for _, tt := range []struct{ path, err string }{
			{"../x", `path "../x" is outside the working directory`},
			{"../outside/secret.txt", `path "../outside/secret.txt" is outside the working directory`},
			{"a/../../x", `path "a/../../x" is outside the working directory`},
			{filepath.Join(outside, "secret.txt"), `is outside the working directory`},
			{"/etc/passwd", `path "/etc/passwd" is outside the working directory`},
			{"a\x00b", `path "a\x00b" contains a NUL byte`},
		} {
			_, err := run(t, c, name, withPath(args, tt.path))
			require.Error(t, err, "%s %q", name, tt.path)
			assert.Contains(t, err.Error(), tt.err, "%s %q", name, tt.path)
		}
		if name != "list_directory" && name != "tree" {
			_, err := run(t, c, name, withPath(args, ""))
			assert.EqualError(t, err, "path is empty; give a path relative to the working directory", name)
		}
	}
	assert.Equal(t, "SECRET\n", readTestFile(t, outside, "secret.txt"))
	entries, err := os.ReadDir(filepath.Dir(root))
	require.NoError(t, err)
	assert.Len(t, entries, 2, "nothing created next to the root")
}

func TestPathsAccepted(t *testing.T) {
	t.Parallel()
	root, _, c := outsideSetup(t)
	writeTestFile(t, root, "a/b.txt", "B\n")
	for _, p := range []string{"a/b.txt", "./a/b.txt", "a/../a/b.txt", "a//b.txt", filepath.Join(root, "a", "b.txt")} {
		got, err := run(t, c, "read_file", map[string]any{"path": p})
		require.NoError(t, err, p)
		assert.Equal(t, "B", got, p)
	}
	mustRun(t, c, "write_file", map[string]any{"path": filepath.Join(root, "abs.txt"), "content": "x"})
	assert.Equal(t, "x", readTestFile(t, root, "abs.txt"))
}

func TestSymlinksOutsideRefused(t *testing.T) {
	t.Parallel()
	root, outside, c := outsideSetup(t)
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "direct.txt")))
	require.NoError(t, os.Symlink("../outside/secret.txt", filepath.Join(root, "relative.txt")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "dirlink")))
	require.NoError(t, os.Symlink("../outside", filepath.Join(root, "reldirlink")))
	for name, args := range fileTools {
		for _, p := range []string{"direct.txt", "relative.txt", "dirlink/secret.txt", "reldirlink/secret.txt", "dirlink/new.txt", "dirlink", "reldirlink"} {
			out, err := run(t, c, name, withPath(args, p))
			if name == "file_info" && !strings.Contains(p, "/") {
				// file_info describes the link itself, without following it.
				require.NoError(t, err, p)
				assert.Contains(t, out, "type: symlink -> ")
				assert.Contains(t, out, "it points outside the working directory")
				assert.NotContains(t, out, "SECRET")
				continue
			}
			require.Error(t, err, "%s %s: %s", name, p, out)
			assert.NotContains(t, err.Error(), "SECRET")
			assert.NotContains(t, out, "SECRET")
		}
	}
	assert.Equal(t, "SECRET\n", readTestFile(t, outside, "secret.txt"))
	_, err := os.Stat(filepath.Join(outside, "new.txt"))
	assert.True(t, os.IsNotExist(err), "nothing written outside")
	// The links themselves are listed, not followed.
	got := mustRun(t, c, "list_directory", map[string]any{})
	assert.Contains(t, got, "direct.txt -> "+filepath.Join(outside, "secret.txt"))
	got = mustRun(t, c, "tree", map[string]any{})
	assert.Contains(t, got, "dirlink -> "+outside)
	assert.NotContains(t, got, "secret.txt (")
}

func TestErrorsWrapErrOutsideRoot(t *testing.T) {
	t.Parallel()
	root, outside, c := outsideSetup(t)
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "dirlink")))
	for _, p := range []string{"../x", "dirlink/secret.txt"} {
		_, err := run(t, c, "write_file", map[string]any{"path": p, "content": "x"})
		assert.True(t, errors.Is(err, ErrOutsideRoot), "%s: %v", p, err)
	}
}

// TestSymlinkSwapRace swaps a folder inside the root for a link to the
// outside while the tools read and write in it: os.Root checks every
// access where it happens, so nothing outside is ever read or written.
func TestSymlinkSwapRace(t *testing.T) {
	t.Parallel()
	root, outside, c := outsideSetup(t)
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "secret.txt"), []byte("inside SECRET\n"), 0o644))

	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swapper.Add(1)
	go func() {
		defer swapper.Done()
		real := filepath.Join(root, "sub-real")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// sub is a folder, then a link to the outside, then a folder again.
			if err := os.Rename(sub, real); err != nil {
				continue
			}
			_ = os.Symlink(outside, sub)
			_ = os.Remove(sub)
			_ = os.Rename(real, sub)
		}
	}()

	var leaked atomic.Int32
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 150 {
				name := []string{"read_file", "edit_file", "write_file", "append_to_file", "multi_edit", "file_info", "list_directory", "tree"}[(g+i)%8]
				p := "sub/secret.txt"
				if name == "list_directory" || name == "tree" {
					p = "sub"
				}
				args := withPath(fileTools[name], p)
				if name == "write_file" || name == "append_to_file" {
					args["content"] = "inside SECRET\n"
				}
				out, _ := c.Resolve(context.Background(), llmtoolkit.Call{Name: name, Arguments: args})
				if strings.Contains(out, "SECRET\n") && !strings.Contains(out, "inside SECRET") {
					leaked.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	swapper.Wait()
	assert.Zero(t, leaked.Load(), "the outside file was read")
	assert.Equal(t, "SECRET\n", readTestFile(t, outside, "secret.txt"), "the outside file was never written")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing created outside")
}

// FuzzConfinement runs every file tool with random paths over a tree full
// of hostile links and special files (named pipes, a socket, a device,
// links to them, a .gitignore that is a named pipe): nothing outside the
// root is ever read or written, no call outlives its deadline (none waits
// on a pipe), no special file is replaced, and no temporary file is left.
func FuzzConfinement(f *testing.F) {
	names := []string{"read_file", "write_file", "edit_file", "multi_edit", "append_to_file", "list_directory", "tree", "file_info", "grep", "glob"}
	for _, s := range []string{"a", "../secret.txt", "link/secret.txt", "loop/x", "a/../../outside", "/", "dirlink/../secret.txt", "chain/secret.txt", "sub/up/outside/secret.txt", "abs"} {
		f.Add(s, uint8(0))
	}
	for _, s := range []string{"pipe", "sock", "dev", "pipelink", "sub/pipe", "sub/up/root/pipe", "pipe/", "sub"} {
		for i := range names {
			f.Add(s, uint8(i))
		}
	}
	root, outside, c := outsideSetup(f)
	writeTestFile(f, root, "a", "inside\n")
	require.NoError(f, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	for link, target := range map[string]string{
		"link":       outside,
		"dirlink":    "../outside",
		"loop":       "loop",
		"chain":      "sub/up/outside",
		"sub/up":     "../..",
		"abs":        filepath.Join(outside, "secret.txt"),
		"sub/secret": "../../outside/secret.txt",
		"self":       ".",
		"pipelink":   "pipe",
	} {
		require.NoError(f, os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))))
	}
	specials := makeSpecialFiles(f, root)
	if len(specials) > 0 && specials[0].name == "pipe" {
		require.NoError(f, mkfifo(filepath.Join(root, "sub", "pipe")))
		require.NoError(f, mkfifo(filepath.Join(root, "sub", ".gitignore")))
		specials = append(specials, specialFile{"sub/pipe", "named pipe", fs.ModeNamedPipe},
			specialFile{"sub/.gitignore", "named pipe", fs.ModeNamedPipe})
	}
	args := map[string]map[string]any{"grep": {"pattern": "SECRET"}, "glob": {"pattern": "**"}}
	for name, a := range fileTools {
		args[name] = a
	}
	f.Fuzz(func(t *testing.T, p string, which uint8) {
		name := names[int(which)%len(names)]
		out, _, err := callWithin(t, c, 5*time.Second, 10*time.Second, name, withPath(args[name], p))
		if strings.Contains(out, "SECRET") || (err != nil && strings.Contains(err.Error(), "SECRET")) {
			t.Fatalf("%s %q read outside: %q %v", name, p, out, err)
		}
		if err != nil && errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s %q ran out its deadline: %v", name, p, err)
		}
		data, rerr := os.ReadFile(filepath.Join(outside, "secret.txt"))
		require.NoError(t, rerr)
		if string(data) != "SECRET\n" {
			t.Fatalf("%s %q wrote outside", name, p)
		}
		entries, rerr := os.ReadDir(outside)
		require.NoError(t, rerr)
		if len(entries) != 1 {
			t.Fatalf("%s %q created a file outside", name, p)
		}
		if entries, _ := os.ReadDir(filepath.Dir(outside)); len(entries) != 2 {
			t.Fatalf("%s %q created a file next to the root", name, p)
		}
		for _, s := range specials {
			requireType(t, root, s.name, s.typ)
		}
		requireNoTempFiles(t, root)
	})
}
