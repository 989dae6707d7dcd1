package codetools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specialFile is a non-regular file that the tests put in a root.
type specialFile struct {
	name string      // its name in the root
	kind string      // how error messages name its type
	typ  fs.FileMode // its type bits
}

// makeSpecialFiles creates in dir a named pipe "pipe", a Unix socket
// "sock" and a character device "dev" (like /dev/null), those the system
// and the test's privileges allow, and returns them (none where the system
// has no such files).
func makeSpecialFiles(t testing.TB, dir string) []specialFile {
	t.Helper()
	var made []specialFile
	for _, s := range []struct {
		specialFile
		make func(string) error
	}{
		{specialFile{"pipe", "named pipe", fs.ModeNamedPipe}, mkfifo},
		{specialFile{"sock", "socket", fs.ModeSocket}, func(p string) error { return mksocket(t, p) }},
		{specialFile{"dev", "character device", fs.ModeDevice | fs.ModeCharDevice}, mkchardev},
	} {
		if err := s.make(filepath.Join(dir, s.name)); err != nil {
			t.Logf("no %s here: %v", s.kind, err)
			continue
		}
		made = append(made, s.specialFile)
	}
	return made
}

// requireType fails when name in dir is not (any longer) of type typ.
func requireType(t testing.TB, dir, name string, typ fs.FileMode) {
	t.Helper()
	info, err := os.Lstat(filepath.Join(dir, name))
	require.NoError(t, err)
	require.Equal(t, typ, info.Mode().Type(), "%s keeps its type", name)
}

// requireNoTempFiles fails when a temporary file of an atomic write is left
// anywhere under dir.
func requireNoTempFiles(t testing.TB, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // a folder swapped away meanwhile
		}
		require.NotContains(t, e.Name(), ".tmp-", "temporary file left: %s", p)
		return nil
	}))
}

// TestSpecialFilesRefusedWithoutBlocking calls every tool that takes a
// path on a named pipe, a socket and a device (directly and through a
// link): none blocks, the file tools refuse them with an error that names
// their type, file_info describes them, and none is replaced or written.
func TestSpecialFilesRefusedWithoutBlocking(t *testing.T) {
	dir, c := newTestTools(t)
	specials := makeSpecialFiles(t, dir)
	if len(specials) == 0 {
		t.Skip("no special files can be made here")
	}
	tools := map[string]map[string]any{
		"grep": {"pattern": "x"},
		"glob": {"pattern": "*"},
	}
	for name, args := range fileTools {
		tools[name] = args
	}
	for _, s := range specials {
		require.NoError(t, symlink(s.name, dir, s.name+"-link"))
		for name, args := range tools {
			for _, p := range []string{s.name, s.name + "-link"} {
				t.Run(name+"/"+p, func(t *testing.T) {
					out, _, err := callWithin(t, c, 5*time.Second, 10*time.Second, name, withPath(args, p))
					if name == "file_info" {
						require.NoError(t, err)
						assert.Contains(t, out, "type: "+s.kind, "file_info names the type as the errors do")
					} else {
						require.Error(t, err, "%s on a %s: %s", name, s.kind, out)
						assert.Contains(t, err.Error(), s.kind)
					}
					requireType(t, dir, s.name, s.typ)
				})
			}
		}
	}
	requireNoTempFiles(t, dir)
}

// TestPipeSwappedInNeverBlocks renames a named pipe over a regular file,
// and back, again and again, while the tools read and write that file: a
// check made before the open (a stat) cannot be trusted, so every tool
// must open without blocking and check the opened file. No call may
// outlive its deadline, and no temporary file may be left.
func TestPipeSwappedInNeverBlocks(t *testing.T) {
	dir, c := newTestTools(t)
	if err := mkfifo(filepath.Join(dir, "probe")); err != nil {
		t.Skip("no named pipes here:", err)
	}
	writeTestFile(t, dir, "target", "one SECRET\n")
	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swapper.Add(1)
	go func() {
		defer swapper.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(dir, fmt.Sprintf("swap-%d", i%2))
			if i%2 == 0 {
				_ = os.WriteFile(tmp, []byte("one SECRET\n"), 0o644)
			} else {
				_ = mkfifo(tmp)
			}
			_ = os.Rename(tmp, filepath.Join(dir, "target"))
		}
	}()
	stopSwapper := sync.OnceFunc(func() { close(stop); swapper.Wait() })
	t.Cleanup(stopSwapper)

	swapFor := 250 * time.Millisecond // hundreds of swaps a tool
	if stress() {
		swapFor = 700 * time.Millisecond
	}
	names := []string{"read_file", "file_info", "write_file", "append_to_file", "edit_file", "multi_edit", "grep"}
	args := map[string]map[string]any{"grep": {"pattern": "SECRET"}}
	for name, a := range fileTools {
		args[name] = a
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			calls := 0
			for time.Since(start) < swapFor {
				calls++
				_, _, err := callWithin(t, c, 3*time.Second, 10*time.Second, name, withPath(args[name], "target"))
				if err != nil {
					require.NotErrorIs(t, err, context.DeadlineExceeded, "%s waited on the pipe", name)
				}
			}
			t.Logf("%d calls", calls)
		})
	}
	stopSwapper()
	requireNoTempFiles(t, dir)
}
