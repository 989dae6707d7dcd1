//go:build linux

package checkpoint_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/internal/calltask"
)

// TestJobsNameExactlyTheJobsThatRan: two background jobs start in turn 1
// and end on their own, unobserved (no call reads them). Each turn's
// checkpoint names exactly the calls whose jobs ran in the interval since
// the previous checkpoint: both at turn 2, the slower one alone once the
// quick one has ended, none once both have, and never one that ended
// before the interval began (before the fix, an unobserved end kept its
// call listed in every later checkpoint).
func TestJobsNameExactlyTheJobsThatRan(t *testing.T) {
	// The test hears of a job's end as the audit trail does (after the
	// checkpoint's Resolver, which is told first): a file the job wrote
	// says it is about to end, not that its end was reported, and under
	// load the report may come much later.
	var (
		endsMu sync.Mutex
		ends   []string
	)
	ctx := calltask.WithLater(context.Background(), func(e calltask.Event) {
		endsMu.Lock()
		defer endsMu.Unlock()
		ends = append(ends, e.Content)
	})
	ended := func(file string) bool {
		endsMu.Lock()
		defer endsMu.Unlock()
		for _, c := range ends {
			if strings.Contains(c, file) {
				return true
			}
		}
		return false
	}
	root := t.TempDir()
	tools, err := codetools.New(root, codetools.WithBackgroundJobs())
	require.NoError(t, err)
	t.Cleanup(func() { _ = tools.Close() })
	store, err := checkpoint.NewStore(openSQLite(t))
	require.NoError(t, err)
	c, err := checkpoint.New(store, root)
	require.NoError(t, err)
	r := checkpoint.Resolver(tools, c, checkpoint.WithRequired())

	turn := 0
	var last checkpoint.Checkpoint
	run := func(calls ...llmtoolkit.Call) checkpoint.Checkpoint {
		turn++
		tctx := llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.StartTurn(turn) })
		for _, call := range calls {
			res := llmtoolkit.Execute(tctx, r, call)
			require.False(t, res.IsError, "%s: %s", call.Name, res.Content)
		}
		list, err := c.List(ctx, checkpoint.Filter{})
		require.NoError(t, err)
		require.NotEmpty(t, list)
		for _, cp := range list {
			if cp.Iteration == turn && cp.Kind == checkpoint.KindTurn {
				last = cp
			}
		}
		require.Equal(t, turn, last.Iteration)
		return last
	}
	bg := func(id, command string) llmtoolkit.Call {
		return llmtoolkit.Call{ID: id, Name: "bash", Arguments: map[string]any{"command": command, "run_in_background": true}}
	}
	look := func() llmtoolkit.Call {
		return llmtoolkit.Call{ID: fmt.Sprintf("look_%d", turn+1), Name: "glob", Arguments: map[string]any{"pattern": "*.txt"}}
	}

	first := run(bg("quick", `sleep 0.2; printf a > a.txt`), bg("slow", `sleep 2; printf b > b.txt`))
	assert.Empty(t, first.Jobs, "no job ran before turn 1")
	second := run(look())
	assert.Equal(t, []string{"quick", "slow"}, second.Jobs, "both started in the interval")

	// Turn by turn until both have ended: the slow one is named while it
	// may run (its end not yet reported when the checkpoint was taken),
	// and the quick one no longer once it has ended.
	sawSlowAlone := false
	deadline := time.Now().Add(20 * time.Second)
	for {
		slowRunning := !ended("b.txt")
		quickEnded := ended("a.txt")
		time.Sleep(300 * time.Millisecond)
		cp := run(look())
		if slowRunning {
			assert.Contains(t, cp.Jobs, "slow", "turn %d: the slow job ran in the interval", turn)
		}
		if quickEnded && slowRunning && len(cp.Jobs) == 1 {
			sawSlowAlone = true
		}
		if !slowRunning {
			break
		}
		require.True(t, time.Now().Before(deadline), "the slow job did not end")
	}
	assert.FileExists(t, filepath.Join(root, "a.txt"))
	assert.FileExists(t, filepath.Join(root, "b.txt"))
	assert.True(t, sawSlowAlone, "a checkpoint named the slow job alone once the quick one had ended")
	// Both ended before this interval began: none is named, now and after.
	for range 2 {
		cp := run(look())
		assert.Empty(t, cp.Jobs, "turn %d: no job ran in the interval", turn)
	}
}
