//go:build linux

package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// TestJobsNameExactlyTheJobsThatRan: two background jobs start in turn 1
// and end on their own, unobserved (no call reads them). Each turn's
// checkpoint names exactly the calls whose jobs ran in the interval since
// the previous checkpoint: both at turn 2, the slower one alone once the
// quick one has ended, none once both have, and never one that ended
// before the interval began (before the fix, an unobserved end kept its
// call listed in every later checkpoint).
func TestJobsNameExactlyTheJobsThatRan(t *testing.T) {
	ctx := context.Background()
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
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(root, name)); return err == nil }

	first := run(bg("quick", `sleep 0.2; printf a > a.txt`), bg("slow", `sleep 2; printf b > b.txt`))
	assert.Empty(t, first.Jobs, "no job ran before turn 1")
	second := run(look())
	assert.Equal(t, []string{"quick", "slow"}, second.Jobs, "both started in the interval")

	// Turn by turn until both have ended: the slow one is named while it
	// may run (b.txt not yet written when the checkpoint was taken), and
	// the quick one no longer once it has ended.
	sawSlowAlone := false
	deadline := time.Now().Add(20 * time.Second)
	for {
		slowRunning := !exists("b.txt")
		quickEnded := exists("a.txt")
		time.Sleep(300 * time.Millisecond) // past the end report of a job that just wrote
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
	assert.True(t, sawSlowAlone, "a checkpoint named the slow job alone once the quick one had ended")
	// Both ended before this interval began: none is named, now and after.
	for range 2 {
		cp := run(look())
		assert.Empty(t, cp.Jobs, "turn %d: no job ran in the interval", turn)
	}
}
