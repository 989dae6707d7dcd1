package codetools

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// hostileIgnoreCases each put something other than a small regular file at
// the root's .gitignore. The tree around it is the same for all:
//
//	rules               "d.txt"   (the target of the link case)
//	sub/.gitignore      "*.tmp", "*.log"
//	sub/deeper/a.txt, b.tmp, c.log, d.txt
//
// Every walk must end, read at most the first MiB of the file, log what it
// skipped or cut, and still apply sub/.gitignore below it.
var hostileIgnoreCases = []struct {
	name     string
	setup    func(t *testing.T, path string)
	ignoresD bool   // the root .gitignore's "d.txt" applies
	logged   string // what the log says about it
}{
	{"named pipe", func(t *testing.T, p string) {
		if err := mkfifo(p); err != nil {
			t.Skipf("no named pipes here: %v", err)
		}
	}, false, "not a regular file"},
	{"device", func(t *testing.T, p string) {
		if err := mknodZero(p); err != nil {
			t.Skipf("cannot make a device here: %v", err)
		}
	}, false, "not a regular file"},
	{"folder", func(t *testing.T, p string) {
		require.NoError(t, os.Mkdir(p, 0o755))
	}, false, "not a regular file"},
	{"symbolic link", func(t *testing.T, p string) {
		require.NoError(t, os.Symlink("rules", p))
	}, false, "symbolic link"},
	{"sparse 256 MiB", func(t *testing.T, p string) {
		require.NoError(t, os.WriteFile(p, []byte("d.txt\n"), 0o644))
		require.NoError(t, os.Truncate(p, 256<<20))
	}, true, "larger than 1 MiB"},
}

// hostileIgnoreEnv names the case a child process runs.
const hostileIgnoreEnv = "LLMTOOLKIT_TEST_HOSTILE_IGNORE"

// TestHostileIgnoreFiles runs each case in a child process, killed at a
// deadline, so that a walk that hangs or reads without end fails the test
// instead of stalling or exhausting the run.
func TestHostileIgnoreFiles(t *testing.T) {
	if name := os.Getenv(hostileIgnoreEnv); name != "" {
		runHostileIgnoreCase(t, name)
		return
	}
	for _, c := range hostileIgnoreCases {
		t.Run(c.name, func(t *testing.T) {
			const deadline = 90 * time.Second // the case takes well under a second
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostileIgnoreFiles$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), hostileIgnoreEnv+"="+c.name)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("the tools still ran after %v; output:\n%s", deadline, out)
			}
			require.NoError(t, err, "child output:\n%s", out)
			if bytes.Contains(out, []byte("--- SKIP")) {
				t.Skipf("%s", out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "peak memory") || strings.Contains(line, " took ") {
					t.Log(strings.TrimSpace(line))
				}
			}
		})
	}
}

// runHostileIgnoreCase is the child's side: the calls and their checks.
func runHostileIgnoreCase(t *testing.T, name string) {
	i := 0
	for i < len(hostileIgnoreCases) && hostileIgnoreCases[i].name != name {
		i++
	}
	require.Less(t, i, len(hostileIgnoreCases), "unknown case %q", name)
	c := hostileIgnoreCases[i]
	stopGuard := guardHeap(512 << 20)
	defer stopGuard()

	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(old)

	root, ct := newTestTools(t)
	writeTestFile(t, root, "rules", "d.txt\n")
	writeTestFile(t, root, "sub/.gitignore", "*.tmp\n*.log\n")
	for _, f := range []string{"a.txt", "b.tmp", "c.log", "d.txt"} {
		writeTestFile(t, root, "sub/deeper/"+f, "x\n")
	}
	c.setup(t, filepath.Join(root, ".gitignore"))

	for _, call := range []llmtoolkit.Call{
		{Name: "tree", Arguments: map[string]any{"path": ".", "depth": 5}},
		{Name: "tree", Arguments: map[string]any{"path": "sub/deeper"}},
		{Name: "grep", Arguments: map[string]any{"pattern": "^x$", "path": "."}},
		{Name: "grep", Arguments: map[string]any{"pattern": "^x$", "path": "sub/deeper"}},
		{Name: "glob", Arguments: map[string]any{"pattern": "**/*", "path": "."}},
		{Name: "glob", Arguments: map[string]any{"pattern": "*", "path": "sub/deeper"}},
	} {
		logs.Reset()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start := time.Now()
		out, err := ct.Resolve(ctx, call)
		cancel()
		fmt.Printf("%s %v took %v\n", call.Name, call.Arguments["path"], time.Since(start))
		require.NoError(t, err, "%s %v", call.Name, call.Arguments)
		what := fmt.Sprintf("%s %v:\n%s", call.Name, call.Arguments, out)
		assert.Contains(t, out, "a.txt", what)
		assert.NotContains(t, out, "b.tmp", "sub/.gitignore below the bad one applies: "+what)
		assert.NotContains(t, out, "c.log", "sub/.gitignore below the bad one applies: "+what)
		if c.ignoresD {
			assert.NotContains(t, out, "d.txt", "the first MiB of the file applies: "+what)
		} else {
			assert.Contains(t, out, "d.txt", "the root .gitignore is not read: "+what)
		}
		assert.Contains(t, logs.String(), ".gitignore", "the skipped file is logged: "+what)
		assert.Contains(t, logs.String(), c.logged, "the skipped file is logged: "+what)
	}
	if peak, ok := peakMemory(); ok {
		fmt.Printf("peak memory (VmHWM) %d MiB\n", peak>>20)
		if !raceEnabled {
			assert.Less(t, peak, int64(200<<20), "peak memory")
		}
	}
}

// guardHeap ends the process when its heap passes limit, so that a read
// without end fails fast instead of exhausting the machine.
func guardHeap(limit uint64) (stop func()) {
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > limit {
				fmt.Printf("heap guard: %d MiB allocated, over %d MiB: stopping\n", v>>20, limit>>20)
				os.Exit(3)
			}
		}
	}()
	return func() { close(done) }
}

// peakMemory returns the process's peak resident memory, where /proc tells.
func peakMemory() (int64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// TestIgnoreLinkNotReadAnywhere: a .gitignore that is a symbolic link is
// not read, by any walk, wherever it starts (git refuses such links), and
// each walk logs it.
func TestIgnoreLinkNotReadAnywhere(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	root, ct := newTestTools(t)
	writeTestFile(t, root, "rules", "*.txt\n")
	writeTestFile(t, root, "a/b/c/x.txt", "x\n")
	writeTestFile(t, root, "a/rules", "*.txt\n")
	require.NoError(t, symlink("rules", root, ".gitignore"))
	require.NoError(t, symlink("rules", root, "a/.gitignore"))
	for _, call := range []llmtoolkit.Call{
		{Name: "tree", Arguments: map[string]any{"path": ".", "depth": 5}},
		{Name: "tree", Arguments: map[string]any{"path": "a"}},
		{Name: "tree", Arguments: map[string]any{"path": "a/b"}},
		{Name: "grep", Arguments: map[string]any{"pattern": "x", "path": "."}},
		{Name: "grep", Arguments: map[string]any{"pattern": "x", "path": "a"}},
		{Name: "grep", Arguments: map[string]any{"pattern": "x", "path": "a/b"}},
		{Name: "glob", Arguments: map[string]any{"pattern": "**/*.txt"}},
		{Name: "glob", Arguments: map[string]any{"pattern": "**/*.txt", "path": "a"}},
		{Name: "glob", Arguments: map[string]any{"pattern": "**/*.txt", "path": "a/b"}},
	} {
		logs.Reset()
		out, err := ct.Resolve(context.Background(), call)
		require.NoError(t, err)
		assert.Contains(t, out, "x.txt", "%s %v:\n%s", call.Name, call.Arguments, out)
		assert.Contains(t, logs.String(), "symbolic link", "%s %v", call.Name, call.Arguments)
	}
}
