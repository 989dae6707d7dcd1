package skills_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/skills"
)

// manySkills writes n skills of realistic size into a new folder.
func manySkills(b testing.TB, n int) string {
	dir := b.TempDir()
	for i := range n {
		name := fmt.Sprintf("skill-%04d", i)
		writeSkill(b, dir, name, skillText(name, fmt.Sprintf("Does task %d of the benchmark; reads the inputs, checks them and writes a report. Use when the user asks for task %d.", i, i),
			"license: MIT", "metadata:\n  author: bench\n  version: \"1.0\"", "allowed-tools: Bash Read")+
			"# Steps\n\n1. Read references/GUIDE.md.\n2. Run scripts/run.sh.\n")
	}
	return dir
}

// BenchmarkLoad500Cold: loading and validating 500 skills with a new
// loader (every SKILL.md read and parsed).
func BenchmarkLoad500Cold(b *testing.B) {
	dir := manySkills(b, 500)
	for b.Loop() {
		set, err := skills.NewLoader([]skills.Source{skills.Dir(dir)}).Load(b.Context())
		require.NoError(b, err)
		require.Equal(b, 500, set.Len())
	}
}

// BenchmarkLoad500Unchanged: scanning the same 500 skills again, nothing
// changed (one stat per skill, nothing read).
func BenchmarkLoad500Unchanged(b *testing.B) {
	dir := manySkills(b, 500)
	l := skills.NewLoader([]skills.Source{skills.Dir(dir)})
	_, err := l.Load(b.Context())
	require.NoError(b, err)
	for b.Loop() {
		set, err := l.Load(b.Context())
		require.NoError(b, err)
		require.Equal(b, 500, set.Len())
	}
}

// BenchmarkIndex100 reports the index's bytes for 100 skills.
func BenchmarkIndex100(b *testing.B) {
	set, err := skills.NewLoader([]skills.Source{skills.Dir(manySkills(b, 100))}).Load(b.Context())
	require.NoError(b, err)
	var n int
	for b.Loop() {
		n = len(set.Index(1 << 20))
	}
	b.ReportMetric(float64(n), "index-bytes")
}

// BenchmarkActivate: one activate_skill call (instructions and the list
// of the skill's files) on a skill of testdata.
func BenchmarkActivate(b *testing.B) {
	set, err := skills.NewLoader([]skills.Source{skills.Dir("testdata/valid")}).Load(b.Context())
	require.NoError(b, err)
	ts := skills.NewTools(set)
	for b.Loop() {
		_, err := ts.Activate(b.Context(), "release-notes")
		require.NoError(b, err)
	}
}
