package codetools

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

// childEnv marks a test binary re-executed by inChild.
const childEnv = "LLMTOOLKIT_TEST_CHILD"

// inChild runs body in a copy of the test binary that runs this test only,
// so that a crash (an unrecovered panic in a goroutine kills the process)
// or a hang fails this test instead of ending or stalling the whole run:
// the child is killed after timeout.
func inChild(t *testing.T, timeout time.Duration, body func(t *testing.T)) {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		body(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("did not finish within %v:\n%s", timeout, out)
	}
	if err != nil {
		t.Fatalf("failed (%v):\n%s", err, out)
	}
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "the child ran the test")
}

// TestGlobPatternClimbingAbovePath: a pattern whose fixed folders climb
// above path crashed the process (slice bounds, in a walker goroutine); it
// is refused with an error naming it, and "." and ".." steps that stay
// inside path are cleaned.
func TestGlobPatternClimbingAbovePath(t *testing.T) {
	t.Parallel()
	inChild(t, 2*time.Minute, func(t *testing.T) {
		_, c := newTestTools(t)
		writeTestFiles(t, c.Root(), map[string]string{"z": "z", "a.go": "a", "sub/b.go": "b", "sub/x/c.go": "c", "other/d.go": "d"})
		refused := []struct {
			pattern, path string
		}{
			{"x/../../**", "sub"},
			{"x/../../*.go", "sub"},
			{"x/../../other/*.go", "sub"},
			{"./x/../../../**", "sub"},
			{"**/../*.go", "sub"},
			{"*/../../*.go", "."},
		}
		for _, tt := range refused {
			out, err := run(t, c, "glob", map[string]any{"pattern": tt.pattern, "path": tt.path})
			require.Error(t, err, "%s in %s: %s", tt.pattern, tt.path, out)
			assert.Contains(t, err.Error(), `"`+tt.pattern+`"`)
			assert.Contains(t, err.Error(), "..")
		}
		found := []struct {
			pattern, path, want string
		}{
			{"x/../*.go", "sub", "sub/b.go"},
			{"x/./*.go", "sub", "sub/x/c.go"},
			{"sub/../**/*.go", ".", "a.go\nother/d.go\nsub/b.go\nsub/x/c.go"},
			{"./sub//x/*.go", ".", "sub/x/c.go"},
		}
		for _, tt := range found {
			out, err := run(t, c, "glob", map[string]any{"pattern": tt.pattern, "path": tt.path})
			require.NoError(t, err, tt.pattern)
			lines := strings.Split(out, "\n")
			assert.ElementsMatch(t, strings.Split(tt.want, "\n"), lines, tt.pattern)
		}
	})
}

// TestWalkPanicBecomesError: a panic in a walker goroutine (here in the
// visitor, as grep's or glob's code would panic) stops the walk and comes
// back as the call's error, a *llmtoolkit.PanicError; the process lives on,
// and no folder stays open.
func TestWalkPanicBecomesError(t *testing.T) {
	inChild(t, 2*time.Minute, func(t *testing.T) {
		_, c := newTestTools(t)
		files := map[string]string{}
		for i := range 200 {
			files[filepath.Join("d"+string(rune('a'+i%7)), "f"+string(rune('a'+i%26))+strings.Repeat("x", i))] = "x"
		}
		writeTestFiles(t, c.Root(), files)
		before := openDescriptors(t)
		var visited atomic.Int64
		err := c.walk(context.Background(), ".", func(_ int, f walk.File) {
			if visited.Add(1) == 10 {
				var m map[string]int
				//lint:ignore SA5000 the nil map write is the point: a runtime panic in the walk's callback
				m[f.Rel]++ // assignment to entry in nil map
			}
		})
		require.Error(t, err)
		assert.ErrorIs(t, err, llmtoolkit.ErrToolPanic)
		var pe *llmtoolkit.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Contains(t, err.Error(), "nil map")
		assert.NotEmpty(t, pe.Stack)
		assert.Less(t, visited.Load(), int64(len(files)), "the walk stopped")
		if before >= 0 {
			assert.Equal(t, before, openDescriptors(t), "no folder left open")
		}

		// The same walk without the panic visits every file.
		visited.Store(0)
		require.NoError(t, c.walk(context.Background(), ".", func(int, walk.File) { visited.Add(1) }))
		assert.Equal(t, int64(len(files)), visited.Load())
	})
}

// openDescriptors counts the process's open descriptors (-1 where
// /proc/self/fd does not exist).
func openDescriptors(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

func TestGoGuarded(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		fn        func() error
		wantErr   error
		wantPanic bool
	}{
		{"returns nil", func() error { return nil }, nil, false},
		{"returns an error", func() error { return errBoom }, errBoom, false},
		{"panics", func() error { panic("bad") }, llmtoolkit.ErrToolPanic, true},
		{"panics with nil", func() error { panic(nil) }, llmtoolkit.ErrToolPanic, true},
		{"runtime error", func() error { var s []int; _ = s[3]; return nil }, llmtoolkit.ErrToolPanic, true},
		{"Goexit", func() error { runtime.Goexit(); return nil }, errGoexit, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := goGuarded("test", tt.fn)
			select {
			case err := <-done:
				if tt.wantErr == nil {
					assert.NoError(t, err)
				} else {
					assert.ErrorIs(t, err, tt.wantErr)
				}
				var pe *llmtoolkit.PanicError
				assert.Equal(t, tt.wantPanic, errors.As(err, &pe))
			case <-time.After(10 * time.Second):
				t.Fatal("no result")
			}
			_, open := <-done
			assert.False(t, open, "closed after its one value")
		})
	}
}

// unblockFIFO opens a named pipe for reading and writing, which never
// blocks on Linux and releases an open blocked on it.
func unblockFIFO(p string) {
	if f, err := os.OpenFile(p, os.O_RDWR, 0); err == nil {
		time.AfterFunc(time.Second, func() { f.Close() })
	}
}

// TestTreeOnNamedPipe: tree on a named pipe blocked in open(2) forever; it
// is refused at once, and a pipe inside a folder is listed without being
// opened.
func TestTreeOnNamedPipe(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	if err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
		t.Skip("no named pipes:", err)
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, mkfifo(filepath.Join(dir, "sub", "inner")))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type answer struct {
		out string
		err error
	}
	call := func(args map[string]any) answer {
		done := make(chan answer, 1)
		go func() {
			out, err := c.Resolve(ctx, llmtoolkit.Call{Name: "tree", Arguments: args})
			done <- answer{out, err}
		}()
		select {
		case a := <-done:
			return a
		case <-time.After(20 * time.Second):
			unblockFIFO(filepath.Join(dir, "pipe"))
			t.Fatalf("tree %v blocked", args)
			return answer{}
		}
	}
	a := call(map[string]any{"path": "pipe"})
	require.Error(t, a.err)
	assert.Contains(t, a.err.Error(), "pipe")
	assert.Contains(t, a.err.Error(), "named pipe")

	a = call(map[string]any{"path": "sub"})
	require.NoError(t, a.err)
	assert.Contains(t, a.out, "inner (0B)")
}

// TestWalkPathThroughLinkOutside: grep, glob and tree with a path through
// a symbolic link to outside the root answered "statat dirlink: path
// escapes from parent"; they answer the usual outside-root error.
func TestWalkPathThroughLinkOutside(t *testing.T) {
	t.Parallel()
	root, outside, c := outsideSetup(t)
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "dirlink")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.Symlink("../../outside", filepath.Join(root, "sub", "up")))
	calls := []struct {
		tool string
		args map[string]any
		name string // what the error names
	}{
		{"grep", map[string]any{"pattern": "SECRET", "path": "dirlink"}, `path "dirlink"`},
		{"grep", map[string]any{"pattern": "SECRET", "path": "dirlink/secret.txt"}, `path "dirlink/secret.txt"`},
		{"grep", map[string]any{"pattern": "SECRET", "path": "sub/up"}, `path "sub/up"`},
		{"glob", map[string]any{"pattern": "*", "path": "dirlink"}, `path "dirlink"`},
		{"glob", map[string]any{"pattern": "dirlink/*.txt"}, `pattern "dirlink/*.txt"`},
		{"glob", map[string]any{"pattern": "up/*.txt", "path": "sub"}, `pattern "up/*.txt"`},
		{"tree", map[string]any{"path": "dirlink"}, `path "dirlink"`},
	}
	for _, tt := range calls {
		out, err := run(t, c, tt.tool, tt.args)
		require.Error(t, err, "%s %v: %s", tt.tool, tt.args, out)
		assert.ErrorIs(t, err, ErrOutsideRoot, "%s %v", tt.tool, tt.args)
		assert.Contains(t, err.Error(), tt.name+" ")
		assert.Contains(t, err.Error(), "outside the working directory")
		assert.NotContains(t, err.Error(), "escapes from parent")
		assert.NotContains(t, err.Error()+out, "SECRET\n")
	}
}

// TestPathologicalIgnoreLinesDoNotStallWalks: a .gitignore line such as
// *a*a*a*a*a*a*a*a*ab*c beside a file named ab + 60 a + c made the
// backtracking wildmatch run for minutes, stalling glob, grep and tree in
// any cloned repository. Each walk must answer at once, with the file
// (which no line ignores) and without the one a line does ignore.
func TestPathologicalIgnoreLinesDoNotStallWalks(t *testing.T) {
	inChild(t, 2*time.Minute, func(t *testing.T) {
		_, c := newTestTools(t)
		kept := "ab" + strings.Repeat("a", 60) + "c"
		kept2 := strings.Repeat("a", 60) + "b"
		writeTestFiles(t, c.Root(), map[string]string{
			".gitignore":      "*a*a*a*a*a*a*a*a*ab*c\n" + strings.Repeat("*a", 16) + "\n",
			kept:              "x\n",
			"sub/" + kept2:    "x\n",
			"sub/" + kept:     "x\n",
			"sub/aaaaaaaaabc": "x\n", // matched by the first line: ignored
		})
		for _, call := range []struct {
			name string
			args map[string]any
		}{
			{"glob", map[string]any{"pattern": "**"}},
			{"grep", map[string]any{"pattern": "x"}},
			{"tree", map[string]any{"depth": 3}},
			{"glob", map[string]any{"pattern": "*", "path": "sub"}},
		} {
			out, took, err := callWithin(t, c, 10*time.Second, 10*time.Second, call.name, call.args)
			require.NoError(t, err, "%s %v", call.name, call.args)
			assert.Less(t, took, 5*time.Second, "%s %v took %v", call.name, call.args, took)
			assert.Contains(t, out, kept, "%s %v", call.name, call.args)
			assert.Contains(t, out, kept2, "%s %v", call.name, call.args)
			assert.NotContains(t, out, "aaaaaaaaabc", "%s %v", call.name, call.args)
		}
	})
}
