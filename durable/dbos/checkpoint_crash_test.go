//go:build linux

package dbos

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
)

// checkpointStore opens the checkpoint store of a crash test's child and
// of the test itself: a SQLite file in the test's directory beside the
// SQLite system database, or the PostgreSQL database of the system
// database itself.
func checkpointStore(spec childSpec) (*checkpoint.Store, error) {
	var db *gorm.DB
	var err error
	if strings.HasPrefix(spec.DB, "sqlite:") {
		db, err = checkpoint.OpenSQLite(filepath.Join(spec.Dir, "checkpoints.db"))
	} else {
		if db, err = gorm.Open(postgres.Open(spec.DB), &gorm.Config{Logger: logger.Discard}); err == nil {
			err = checkpoint.Migrate(db)
		}
	}
	if err != nil {
		return nil, err
	}
	return checkpoint.NewStore(db)
}

// checkpointer is the Checkpointer of the crash test's tree, Dir/tree.
func checkpointer(spec childSpec) (*checkpoint.Checkpointer, error) {
	s, err := checkpointStore(spec)
	if err != nil {
		return nil, err
	}
	return checkpoint.New(s, filepath.Join(spec.Dir, "tree"), checkpoint.WithRootName("tree"))
}

// TestCrashResumeKeepsOneCheckpointPerTurn: the crash test's run with its
// resolver wrapped by checkpoint.Resolver, each call also writing a file
// named after it into the tree. The first process is SIGKILLed inside
// call-2 after the call wrote its file; the second resumes the run. The
// resumed turn 2 keeps the checkpoint its first attempt took (the tree
// before call-2 wrote: the run id, agent and iteration key it), so the
// store holds one turn checkpoint per turn, each attributed to the run's
// tenant and conversation; rewinding to each gives the tree as that turn
// began, and undoing the rewind gives the end state back; the resumed
// run's history is cut at turn 2 as its checkpoint says.
func TestCrashResumeKeepsOneCheckpointPerTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			tree := filepath.Join(dir, "tree")
			testkit.WriteFiles(t, tree, map[string]string{"seed": "before the run\n"})
			spec := childSpec{DB: db(t), Dir: dir, Run: "run-1", Executor: "a", Start: true, Block: "call-2", Checkpoints: true}
			first := startChild(t, spec)
			waitFile(t, first, filepath.Join(dir, "blocked"), 60*time.Second)
			require.FileExists(t, filepath.Join(tree, "call-2"), "call-2 wrote its file before the kill")
			first.kill(t)

			spec.Start, spec.Block = false, ""
			second := startChild(t, spec)
			second.wait(t, 90*time.Second)
			b, err := os.ReadFile(filepath.Join(dir, "result-a.json"))
			require.NoError(t, err, second.output())
			var res Result
			require.NoError(t, json.Unmarshal(b, &res))
			require.NoError(t, res.Err())
			assert.Equal(t, map[string]int{"a": 2}, lines(t, dir, "attempts.log"), "two attempts")
			assert.Equal(t, map[string]int{"call-1": 1, "call-2": 2, "call-3a": 1, "call-3b": 1}, lines(t, dir, "effects.log"))

			c, err := checkpointer(spec)
			require.NoError(t, err)
			list, err := c.List(ctx, checkpoint.Filter{})
			require.NoError(t, err)
			sort.Slice(list, func(i, j int) bool { return list[i].Iteration < list[j].Iteration })
			var iterations []int
			for _, cp := range list {
				assert.Equal(t, checkpoint.KindTurn, cp.Kind)
				assert.True(t, strings.HasPrefix(cp.Key, "turn/run-1//"), "keyed by the run: %q", cp.Key)
				assert.Equal(t, testTenant, cp.TenantID, "the run's tenant")
				assert.Equal(t, ConversationID("run-1"), cp.ConversationID, "the run's conversation")
				iterations = append(iterations, cp.Iteration)
			}
			require.Equal(t, []int{1, 2, 3}, iterations, "one checkpoint per turn, not two for the resumed one")
			assert.Equal(t, "call-1", list[0].CallID)
			assert.Equal(t, "call-2", list[1].CallID)
			cut, ok := checkpoint.CutHistory(res.Messages, list[1])
			require.True(t, ok, "the resumed run's history holds call-2")
			require.NotEmpty(t, cut)
			assert.Equal(t, agentloop.RoleTool, cut[len(cut)-1].Role, "cut after call-1's result")
			assert.Equal(t, "call-1", cut[len(cut)-1].ToolCallID)
			end := testkit.TreeLines(t, tree)

			// What each turn began with, by the independent walker.
			files := []string{"seed", "call-1", "call-2", "call-3a", "call-3b"}
			want := func(n int) map[string]string {
				m := map[string]string{}
				for _, f := range files[:n] {
					m[f] = "written by " + f + "\n"
				}
				m["seed"] = "before the run\n"
				return m
			}
			for i, n := range []int{1, 2, 3} {
				cp := list[i]
				r, err := c.Rewind(ctx, cp.ID, checkpoint.RewindOptions{})
				require.NoError(t, err)
				assert.True(t, r.Exact)
				expect := filepath.Join(t.TempDir(), "expect")
				testkit.WriteFiles(t, expect, want(n))
				assert.Equal(t, testkit.TreeLines(t, expect), testkit.TreeLines(t, tree), "turn %d's tree: call-2's first write is not in it", cp.Iteration)
				undo, err := c.Rewind(ctx, r.Before.ID, checkpoint.RewindOptions{})
				require.NoError(t, err)
				assert.True(t, undo.Exact)
				assert.Equal(t, end, testkit.TreeLines(t, tree), "the rewind undone")
			}
		})
	}
}
