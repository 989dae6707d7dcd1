package codetools

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConcurrentAppends(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	const goroutines, calls = 64, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				_, err := run(t, c, "append_to_file", map[string]any{"path": "log/out.txt", "content": fmt.Sprintf("g%d-%d\n", g, i)})
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(readTestFile(t, dir, "log/out.txt"), "\n"), "\n")
	require.Len(t, lines, goroutines*calls)
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	assert.Len(t, seen, goroutines*calls, "every line once, none torn")
}

func TestConcurrentEditsOnOneFile(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	const n = 32
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "marker-%02d: todo\n", i)
	}
	writeTestFile(t, dir, "f.txt", sb.String())
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half of them through a second name of the file.
			name := "f.txt"
			if i%2 == 1 {
				name = "./sub/../f.txt"
			}
			_, err := run(t, c, "edit_file", map[string]any{"path": name,
				"oldText": fmt.Sprintf("marker-%02d: todo", i), "newText": fmt.Sprintf("marker-%02d: done", i)})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	got := readTestFile(t, dir, "f.txt")
	assert.Equal(t, strings.ReplaceAll(sb.String(), "todo", "done"), got)
}

func TestConcurrentEditsThroughSymlinkShareTheLock(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	var sb strings.Builder
	for i := range 16 {
		fmt.Fprintf(&sb, "m%02d\n", i)
	}
	writeTestFile(t, dir, "f.txt", sb.String())
	require.NoError(t, symlink("f.txt", dir, "alias.txt"))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "f.txt"
			if i%2 == 1 {
				name = "alias.txt"
			}
			_, err := run(t, c, "edit_file", map[string]any{"path": name, "oldText": fmt.Sprintf("m%02d\n", i), "newText": fmt.Sprintf("M%02d\n", i)})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.Equal(t, strings.ToUpper(sb.String()), readTestFile(t, dir, "f.txt"))
}
