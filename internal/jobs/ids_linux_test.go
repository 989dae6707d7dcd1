package jobs

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idsChildEnv makes the test binary an earlier process that started jobs
// and printed their ids.
const idsChildEnv = "LLMTOOLKIT_JOBS_IDS_CHILD"

// TestIDsAreUniqueBeyondTheProcess: ids never repeat between the tables
// of a process, and an id another process gave (a process before a
// restart) is answered as lost, never as one of this process's jobs,
// though this process started as many.
func TestIDsAreUniqueBeyondTheProcess(t *testing.T) {
	if os.Getenv(idsChildEnv) != "" {
		tb := newTestTable(t, Limits{})
		for range 3 {
			j, err := tb.Start(Spec{Cmd: command(t, "true", false), Owner: "run-1"})
			require.NoError(t, err)
			os.Stdout.WriteString("id " + strconv.Itoa(j.ID()) + "\n")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestIDsAreUniqueBeyondTheProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), idsChildEnv+"=1")
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var dead []int
	for line := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "id "); ok {
			id, err := strconv.Atoi(v)
			require.NoError(t, err)
			dead = append(dead, id)
		}
	}
	require.Len(t, dead, 3)

	a, b := newTestTable(t, Limits{}), newTestTable(t, Limits{})
	seen := map[int]bool{}
	var inA, inB []int
	for range 3 {
		for _, tb := range []*Table{a, b} {
			j, err := tb.Start(Spec{Cmd: command(t, "true", false), Owner: "run-1"})
			require.NoError(t, err)
			require.False(t, seen[j.ID()], "id %d given twice", j.ID())
			seen[j.ID()] = true
			assert.GreaterOrEqual(t, j.ID(), idFloor)
			assert.Less(t, j.ID(), 10_000_000, "at most 7 digits: short enough to type")
			if tb == a {
				inA = append(inA, j.ID())
			} else {
				inB = append(inB, j.ID())
			}
		}
	}
	for _, id := range dead {
		assert.False(t, seen[id], "the earlier process's id %d was given again", id)
		_, err := a.Get(id, "run-1")
		require.ErrorIs(t, err, ErrJobLost, "id %d", id)
		assert.Contains(t, err.Error(), "job "+strconv.Itoa(id))
	}
	for _, id := range inB {
		_, err := a.Get(id, "run-1")
		require.ErrorIs(t, err, ErrNoJob, "another table's job is not named")
		assert.NotErrorIs(t, err, ErrJobLost, "another table's job was not lost")
	}
	for _, id := range inA {
		_, err := a.Get(id, "run-1")
		require.NoError(t, err)
	}
}
