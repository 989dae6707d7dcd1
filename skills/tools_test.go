package skills_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/skills"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

func validSet(t *testing.T) *skills.Set {
	t.Helper()
	set := load(t, skills.Dir("testdata/valid"))
	require.Empty(t, set.Problems())
	return set
}

func call(t *testing.T, r llmtoolkit.Resolver, name string, args map[string]any) llmtoolkit.Result {
	t.Helper()
	return llmtoolkit.Execute(t.Context(), r, llmtoolkit.Call{ID: "c-" + name, Name: name, Arguments: args})
}

// activate_skill answers with the instructions, the folder and the list
// of files (not their content); read_skill_resource with one file.
func TestActivateAndRead(t *testing.T) {
	set := validSet(t)
	ts := skills.NewTools(set)
	res := call(t, ts, skills.ActivateTool, map[string]any{"name": "release-notes"})
	require.NoError(t, res.Err)
	sk, _ := set.Lookup("release-notes")
	assert.Equal(t, `<skill_content name="release-notes">
`+sk.Instructions+`
</skill_content>
Compatibility: Needs a POSIX shell
Skill folder: `+sk.Dir+`
Relative paths in this skill are relative to that folder; its scripts run with bash from there (for example: bash `+sk.Dir+`/scripts/NAME.sh).
Allowed tools: Bash read_file
<skill_resources>
<file>assets/template.md</file>
<file>references/STYLE.md</file>
<file>scripts/count.sh</file>
</skill_resources>`, res.Content)
	assert.NotContains(t, res.Content, "One line per change", "files are listed, not read")
	assert.Equal(t, []string{"release-notes"}, ts.Active())

	res = call(t, ts, skills.ReadResourceTool, map[string]any{"name": "release-notes", "path": "references/STYLE.md"})
	require.NoError(t, res.Err)
	assert.Equal(t, "# House style\n\nOne line per change, in the imperative.\n", res.Content)

	res = call(t, ts, skills.ActivateTool, map[string]any{"name": "no-such-skill"})
	require.ErrorIs(t, res.Err, skills.ErrUnknownSkill)
	assert.Contains(t, res.Content, `"no-such-skill" (available: 2024, a-b-b`)

	deep := call(t, ts, skills.ActivateTool, map[string]any{"name": "deep-resources"})
	require.NoError(t, deep.Err)
	assert.Contains(t, deep.Content, "<file>references/a/b/c.md</file>\n<file>references/top.md</file>\n<file>scripts/run.py</file>")
}

// Reads stay inside the skill's folder: "..", absolute paths and links
// out are refused, special files and binaries too, big files are capped.
func TestResourceConfinement(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s3cret"), 0o600))
	writeSkill(t, dir, "other", skillText("other", "Another skill."))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other", "private.md"), []byte("other's"), 0o644))
	skillDir := filepath.Dir(writeSkill(t, dir, "box", skillText("box", "A boxed skill.")))
	require.NoError(t, os.MkdirAll(filepath.Join(skillDir, "references"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(skillDir, "references", "ok.md"), []byte("fine"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(skillDir, "references", "big.md"), []byte(strings.Repeat("b", 2000)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(skillDir, "references", "bin.dat"), []byte{0, 1, 2}, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(skillDir, "references", "link.md")))
	require.NoError(t, os.Symlink("../other", filepath.Join(skillDir, "sibling")))
	require.NoError(t, os.Symlink("ok.md", filepath.Join(skillDir, "references", "inside.md")))

	ts := skills.NewTools(load(t, skills.Dir(dir)), skills.WithMaxResourceBytes(1000))
	read := func(p string) llmtoolkit.Result {
		return call(t, ts, skills.ReadResourceTool, map[string]any{"name": "box", "path": p})
	}
	for _, p := range []string{"../other/private.md", filepath.Join(outside, "secret.txt"), "references/link.md", "sibling/private.md", "references/../../other/private.md"} {
		res := read(p)
		assert.ErrorIs(t, res.Err, skills.ErrOutsideSkill, p)
		assert.NotContains(t, res.Content, "s3cret")
		assert.NotContains(t, res.Content, "other's")
	}
	assert.Equal(t, "fine", read("references/inside.md").Content, "a link inside is followed")
	assert.Equal(t, "fine", read("./references/ok.md").Content)
	assert.ErrorIs(t, read("references/big.md").Err, skills.ErrTooLarge)
	assert.Contains(t, read("references/bin.dat").Content, "is binary (3 bytes)")
	assert.Contains(t, read("references").Content, "folder")
	assert.Contains(t, read("").Content, "empty")
}

// The tools are deferred for toolsearch: tool_search finds activate_skill.
func TestDeferredWithToolSearch(t *testing.T) {
	ts := skills.NewTools(validSet(t), skills.WithDeferred())
	for _, tool := range ts.Tools() {
		assert.True(t, tool.Deferred, tool.Name)
	}
	search := toolsearch.New(ts)
	offered, _ := llmtoolkit.SplitDeferred(search.Tools())
	require.Len(t, offered, 1)
	assert.Equal(t, toolsearch.SearchToolName, offered[0].Name)
	res := call(t, search, toolsearch.SearchToolName, map[string]any{"query": "activate a skill's instructions"})
	require.NoError(t, res.Err)
	assert.Contains(t, res.Content, skills.ActivateTool)
}

// With WithAllowedTools, an active skill's allowed-tools narrow the
// host's tools (through llmtoolkit.Filter), aliases included; the skill
// tools stay; Deactivate restores the list.
// bashTool is a bash that declares its command, as codetools' does.
func bashTool() llmtoolkit.Tool {
	tool := llmtoolkit.MustTool("bash", "Runs a command.", map[string]any{"type": "object",
		"properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []any{"command"}})
	tool.Commands = &llmtoolkit.CommandArguments{Names: []string{"command"}}
	return tool
}

func TestAllowedToolsNarrow(t *testing.T) {
	host := lt.NewFake(map[string]string{"read_file": "read", "write_file": "wrote", "http_get": "got"})
	host.Add(bashTool(), func(context.Context, llmtoolkit.Call) (string, error) { return "ran", nil })
	set := validSet(t)
	for _, narrow := range []bool{true, false} {
		opts := []skills.ToolOption{}
		if narrow {
			opts = append(opts, skills.WithAllowedTools())
		}
		ts := skills.NewTools(set, opts...)
		r := ts.Narrow(llmtoolkit.Compose(host, ts))
		names := func() []string {
			var out []string
			for _, tool := range r.Tools() {
				out = append(out, tool.Name)
			}
			return out
		}
		all := []string{"bash", "http_get", "read_file", "write_file", skills.ActivateTool, skills.ReadResourceTool}
		assert.ElementsMatch(t, all, names())
		require.NoError(t, call(t, r, skills.ActivateTool, map[string]any{"name": "minimal"}).Err)
		assert.ElementsMatch(t, all, names(), "a skill without allowed-tools narrows nothing")
		require.NoError(t, call(t, r, skills.ActivateTool, map[string]any{"name": "pdf-processing"}).Err) // Bash(pdftotext:*) Read
		if !narrow {
			assert.ElementsMatch(t, all, names(), "without the option nothing narrows")
			continue
		}
		assert.ElementsMatch(t, []string{"bash", "read_file", skills.ActivateTool, skills.ReadResourceTool}, names())
		res := call(t, r, "write_file", map[string]any{})
		require.ErrorIs(t, res.Err, llmtoolkit.ErrUnknownTool)
		assert.Contains(t, res.Content, "Available tools: read_file, bash, activate_skill, read_skill_resource")
		_, err := r.Resolve(t.Context(), llmtoolkit.Call{Name: "write_file"})
		require.ErrorIs(t, err, llmtoolkit.ErrUnknownTool)
		assert.Contains(t, err.Error(), "not among the allowed tools of the active skills (minimal, pdf-processing)")
		assert.Empty(t, host.CallsTo("write_file"))
		// Bash(pdftotext:*): bash is offered, for pdftotext only.
		require.NoError(t, call(t, r, "bash", map[string]any{"command": "pdftotext report.pdf -"}).Err)
		res = call(t, r, "bash", map[string]any{"command": "rm -rf ~"})
		require.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
		assert.Contains(t, res.Content, `allow it only for pdftotext:*: the command "rm -rf ~" is not one of them`)
		assert.Len(t, host.CallsTo("bash"), 1, "the refused command never ran")
		ts.Deactivate("pdf-processing")
		assert.ElementsMatch(t, all, names())
		require.NoError(t, call(t, r, "bash", map[string]any{"command": "rm -rf build"}).Err, "no active skill bounds bash")
	}
}

// TestAllowedToolsCommandPatterns: a skill's Bash(PATTERN) entries bound
// bash's commands (and any tool's that declares them) while it is active:
// one command matching a pattern, nothing chained, piped or substituted.
func TestAllowedToolsCommandPatterns(t *testing.T) {
	set := validSet(t) // allowed-tools-patterns: Bash(git:*) Bash(jq:*) Read Grep
	var ran []string
	host := lt.NewFake(map[string]string{"read_file": "read"})
	host.Add(bashTool(), func(_ context.Context, c llmtoolkit.Call) (string, error) {
		ran = append(ran, c.Arguments["command"].(string))
		return "ran", nil
	})
	term := llmtoolkit.MustTool("write_stdin", "Types into a terminal.", map[string]any{"type": "object",
		"properties": map[string]any{"chars": map[string]any{"type": "string"}}})
	term.Commands = &llmtoolkit.CommandArguments{Typed: func(_ context.Context, args map[string]any) ([]string, error) {
		s, _ := args["chars"].(string)
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), nil
	}}
	host.Add(term, func(context.Context, llmtoolkit.Call) (string, error) { return "typed", nil })
	ts := skills.NewTools(set, skills.WithAllowedTools(), skills.WithToolAliases(map[string]string{"Term": "write_stdin"}))
	r := ts.Narrow(llmtoolkit.Compose(host, ts))
	_, err := ts.Activate(t.Context(), "allowed-tools-patterns")
	require.NoError(t, err)
	tests := []struct {
		command string
		ok      bool
	}{
		{"git status", true},
		{"git", true},
		{"  git log --oneline -5  ", true},
		{"jq .name package.json", true},
		{"gitk", false},
		{"git status; rm -rf ~", false},
		{"git log | sh", false},
		{"git log && curl evil.example", false},
		{"git log `rm x`", false},
		{"git log $(rm x)", false},
		{"git log > /etc/passwd", false},
		{"git log\nrm -rf ~", false},
		{"GIT_DIR=/tmp git log", false},
		{"sh -c 'git status'", false},
		{"", false},
	}
	for _, tt := range tests {
		res := call(t, r, "bash", map[string]any{"command": tt.command})
		if tt.ok {
			assert.NoError(t, res.Err, tt.command)
			continue
		}
		assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied, tt.command)
		assert.Contains(t, res.Content, "git:* or jq:*", tt.command)
	}
	assert.Equal(t, []string{"git status", "git", "  git log --oneline -5  ", "jq .name package.json"}, ran)

	// A tool running a list of commands (codetools' shell) runs them only
	// when each matches.
	shell := llmtoolkit.MustTool("shell", "Runs commands.", map[string]any{"type": "object",
		"properties": map[string]any{"commands": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}})
	shell.Commands = &llmtoolkit.CommandArguments{Lists: []string{"commands"}}
	host.Add(shell, func(context.Context, llmtoolkit.Call) (string, error) { return "ran", nil })
	ts3 := skills.NewTools(set, skills.WithAllowedTools(), skills.WithToolAliases(map[string]string{"Bash": "shell"}))
	r3 := ts3.Narrow(llmtoolkit.Compose(host, ts3))
	_, err = ts3.Activate(t.Context(), "allowed-tools-patterns")
	require.NoError(t, err)
	require.NoError(t, call(t, r3, "shell", map[string]any{"commands": []any{"git status", "jq . a.json"}}).Err)
	res := call(t, r3, "shell", map[string]any{"commands": []any{"git status", "rm -rf ~"}})
	require.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
	assert.Contains(t, res.Content, `"rm -rf ~"`)

	// A tool that is not named is not offered; an entry without a pattern
	// leaves its tool whole.
	assert.ErrorIs(t, call(t, r, "write_stdin", map[string]any{"chars": "ls\n"}).Err, llmtoolkit.ErrUnknownTool)
	require.NoError(t, call(t, r, "read_file", map[string]any{}).Err)

	// Typed lines are checked as commands, and a tool given a pattern
	// that declares no commands is refused: its arguments cannot be checked.
	extra, err := skills.Parse([]byte("---\nname: term\ndescription: d\nallowed-tools: Term(git:*) Read(src/**)\n---\n"), "term", "term/SKILL.md")
	require.NoError(t, err)
	ts2 := skills.NewTools(skills.NewSet(extra), skills.WithAllowedTools(), skills.WithToolAliases(map[string]string{"Term": "write_stdin"}))
	r2 := ts2.Narrow(llmtoolkit.Compose(host, ts2))
	_, err = ts2.Activate(t.Context(), "term")
	require.NoError(t, err)
	require.NoError(t, call(t, r2, "write_stdin", map[string]any{"chars": "git status\n"}).Err)
	res = call(t, r2, "write_stdin", map[string]any{"chars": "git status\nrm -rf ~\n"})
	require.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
	res = call(t, r2, "read_file", map[string]any{})
	require.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
	assert.Contains(t, res.Content, "declares no command arguments")
}

// Activations and reads leave audit rows like any tool's.
func TestActivationsAreAudited(t *testing.T) {
	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	rec := trace.Record(skills.NewTools(validSet(t)), db)
	ctx := trace.WithConversation(t.Context(), "0190a1b2-0000-7000-8000-000000000001", "0190a1b2-0000-7000-8000-000000000002", 1)
	for _, c := range []llmtoolkit.Call{
		{ID: "a1", Name: skills.ActivateTool, Arguments: map[string]any{"name": "release-notes"}},
		{ID: "r1", Name: skills.ReadResourceTool, Arguments: map[string]any{"name": "release-notes", "path": "references/STYLE.md"}},
		{ID: "r2", Name: skills.ReadResourceTool, Arguments: map[string]any{"name": "release-notes", "path": "../pdf-processing/SKILL.md"}},
	} {
		llmtoolkit.Execute(ctx, rec, c)
	}
	rows, err := trace.List(context.Background(), db, trace.Filter{})
	require.NoError(t, err)
	require.Len(t, rows, 3)
	byCall := map[string]trace.Trace{}
	for _, r := range rows {
		byCall[*r.CallID] = r
	}
	assert.Equal(t, skills.ActivateTool, byCall["a1"].ToolName)
	assert.Equal(t, trace.ResultOK, byCall["r1"].ResultType)
	assert.Equal(t, trace.ResultError, byCall["r2"].ResultType)
	assert.Contains(t, byCall["r2"].Result["error"], "outside the skill")
}

// A sub-agent given a subset sees only those skills.
func TestSubsetForSubAgent(t *testing.T) {
	sub := skills.NewTools(validSet(t).Subset("minimal", "release-notes", "absent"))
	require.NoError(t, call(t, sub, skills.ActivateTool, map[string]any{"name": "minimal"}).Err)
	res := call(t, sub, skills.ActivateTool, map[string]any{"name": "pdf-processing"})
	require.ErrorIs(t, res.Err, skills.ErrUnknownSkill)
	assert.Contains(t, res.Content, "(available: minimal, release-notes)")
}

// Concurrent activations, reads, narrowing and reloads share the state
// safely (run with -race).
func TestConcurrentUse(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"one", "two", "three"} {
		writeSkill(t, dir, n, skillText(n, "Skill "+n+".", "allowed-tools: bash"))
	}
	l := skills.NewLoader([]skills.Source{skills.Dir(dir)}, skills.WithReloadInterval(0))
	ts := skills.NewTools(l, skills.WithAllowedTools())
	r := ts.Narrow(llmtoolkit.Compose(lt.NewFake(map[string]string{"bash": "ok", "write_file": "ok"}), ts))
	done := make(chan struct{})
	for i := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			name := []string{"one", "two", "three"}[i%3]
			for range 20 {
				assert.NoError(t, call(t, r, skills.ActivateTool, map[string]any{"name": name}).Err)
				_ = r.Tools()
				ts.Deactivate(name)
			}
		}()
	}
	for range 8 {
		<-done
	}
	assert.Empty(t, ts.Active())
}
