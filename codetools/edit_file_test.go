package codetools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textedit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEditFilePiCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, oldText, newText, want, err string
	}{
		{"replace", "Hello, world!", "world", "testing", "Hello, testing!", ""},
		{"not found", "Hello, world!", "nonexistent", "x", "", "could not find the exact text in f.txt: the old text must match exactly, including all whitespace and newlines"},
		{"three occurrences", "foo foo foo", "foo", "bar", "", "found 3 occurrences of the text in f.txt: the text must be unique; provide more context to make it unique"},
		{"trailing whitespace", "line one   \nline two  \nline three\n", "line one\nline two\n", "replaced\n", "replaced\nline three\n", ""},
		{"CRLF", "first\r\nsecond\r\nthird\r\n", "second", "REPLACED", "first\r\nREPLACED\r\nthird\r\n", ""},
		{"CRLF and BOM", "\ufefffirst\r\nsecond\r\nthird\r\n", "second", "REPLACED", "\ufefffirst\r\nREPLACED\r\nthird\r\n", ""},
		{"curly quotes", "console.log(“hello”);\n", `console.log("hello");`, `console.log("bye");`, "console.log(\"bye\");\n", ""},
		{"en dash", "range: 1–10\n", "range: 1-10", "range: 1-20", "range: 1-20\n", ""},
		{"no-break space", "a\u00a0b\n", "a b", "c", "c\n", ""},
		{"identical", "same", "same", "same", "", "no changes made to f.txt: the replacement produced identical content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, c := newTestTools(t)
			writeTestFile(t, dir, "f.txt", tt.content)
			got, err := run(t, c, "edit_file", map[string]any{"path": "f.txt", "oldText": tt.oldText, "newText": tt.newText})
			if tt.err != "" {
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), tt.err), err.Error())
				assert.Equal(t, tt.content, readTestFile(t, dir, "f.txt"), "nothing written")
				return
			}
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(got, "Successfully replaced text in f.txt."), got)
			assert.Equal(t, tt.want, readTestFile(t, dir, "f.txt"))
		})
	}
}

func TestEditFileNotFoundShowsClosestLines(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	var lines []string
	for i := 1; i <= 40; i++ {
		lines = append(lines, fmt.Sprintf("func handler%d(w http.ResponseWriter) {}", i))
	}
	writeTestFile(t, dir, "h.go", strings.Join(lines, "\n")+"\n")
	_, err := run(t, c, "edit_file", map[string]any{"path": "h.go", "oldText": "func handler27(w http.ResponseWritter) {}", "newText": "x"})
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "The closest lines in the file are:\n")
	assert.Contains(t, msg, "27\tfunc handler27(w http.ResponseWriter) {}")
	assert.Contains(t, msg, "25\tfunc handler25")
	assert.NotContains(t, msg, "\t"+lines[10]+"\n")
}

func TestEditFileDiffAndDisplay(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, "f.txt", linesText(20))
	res := execute(c, "edit_file", map[string]any{"path": "f.txt", "oldText": "line 10\n", "newText": "ten\n"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "Successfully replaced text in f.txt.\n\n"+
		"  7 line 7\n  8 line 8\n  9 line 9\n-10 line 10\n+10 ten\n 11 line 11\n 12 line 12\n 13 line 13", res.Content)
	assert.Equal(t, DiffPayload{
		Path:      "f.txt",
		Diff:      "--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+ten\n line 11\n line 12\n line 13",
		Truncated: false, Added: 1, Removed: 1, FirstChangedLine: 10, Replacements: 1,
	}, payloadOf[DiffPayload](t, res, DisplayDiff), "the whole texts are not in the payload")
}

// TestEditDisplayBounded: the Display of an edit holds a capped diff,
// never the whole file. On main, a 9 MiB edit showed both texts (18 MiB
// of JSON), past the 16 MiB frame of the MCP SDK.
func TestEditDisplayBounded(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	for i := 0; sb.Len() < 9<<20; i++ {
		fmt.Fprintf(&sb, "record %d: some payload text\n", i)
	}
	big := sb.String()
	tests := []struct {
		name            string
		call            string
		args            map[string]any
		truncated       bool
		maxJSON         int
		added, removed  int
		firstChangeLine int
		replacements    int
	}{
		{"edit one line", "edit_file", map[string]any{"path": "f.txt", "oldText": "record 200000:", "newText": "RECORD 200000:"},
			false, 1 << 10, 1, 1, 200_001, 1},
		{"edit the whole file", "edit_file", map[string]any{"path": "f.txt", "oldText": big, "newText": strings.ReplaceAll(big, "some", "other")},
			true, 2 * maxDisplayDiffBytes, 0, 0, 1, 1},
		{"multi_edit", "multi_edit", map[string]any{"path": "f.txt", "edits": []any{
			map[string]any{"oldText": "record 10:", "newText": "R10:"}, map[string]any{"oldText": "record 240000:", "newText": "R240000:"}}},
			false, 2 << 10, 2, 2, 11, 2},
		{"write_file", "write_file", map[string]any{"path": "f.txt", "content": strings.ReplaceAll(big, "text", "words")},
			true, 2 * maxDisplayDiffBytes, 0, 0, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, c := newTestTools(t)
			writeTestFile(t, dir, "f.txt", big)
			res := execute(c, tt.call, tt.args)
			require.False(t, res.IsError, res.Content)
			require.NotNil(t, res.Display)
			data, err := json.Marshal(res.Display)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(data), tt.maxJSON, "the Display as JSON, as MCP sends it")
			p := payloadOf[DiffPayload](t, res, DisplayDiff)
			assert.Equal(t, tt.truncated, p.Truncated)
			assert.Equal(t, tt.firstChangeLine, p.FirstChangedLine)
			assert.Equal(t, tt.replacements, p.Replacements)
			diff := p.Diff
			assert.True(t, strings.HasPrefix(diff, "--- a/f.txt\n+++ b/f.txt\n@@ -"), diff[:min(len(diff), 200)])
			if tt.truncated {
				assert.True(t, strings.HasSuffix(diff, "\n... (diff cut at 64 KiB)"))
				assert.LessOrEqual(t, len(diff), maxDisplayDiffBytes)
				return
			}
			assert.Equal(t, tt.added, p.Added)
			assert.Equal(t, tt.removed, p.Removed)
		})
	}
}

// TestEditsThatChangeNothing: edit_file and multi_edit say the same when
// the file would stay as it was, and write nothing. On main, multi_edit
// reported success and rewrote the file.
func TestEditsThatChangeNothing(t *testing.T) {
	t.Parallel()
	const content = "alpha\r\nbeta\r\ngamma\r\n"
	tests := []struct {
		name string
		call string
		args map[string]any
	}{
		{"edit_file, same text", "edit_file", map[string]any{"path": "f.txt", "oldText": "beta", "newText": "beta"}},
		{"multi_edit, same text", "multi_edit", map[string]any{"path": "f.txt", "edits": []any{
			map[string]any{"oldText": "beta", "newText": "beta"}}}},
		{"multi_edit, edits cancel out", "multi_edit", map[string]any{"path": "f.txt", "edits": []any{
			map[string]any{"oldText": "beta", "newText": "BETA"},
			map[string]any{"oldText": "BETA", "newText": "beta"}}}},
		{"multi_edit, three edits cancel out", "multi_edit", map[string]any{"path": "f.txt", "edits": []any{
			map[string]any{"oldText": "alpha\nbeta", "newText": "one"},
			map[string]any{"oldText": "gamma", "newText": "two"},
			map[string]any{"oldText": "one\r\ntwo", "newText": "alpha\nbeta\ngamma"}}}},
	}
	const want = "no changes made to f.txt: the replacement produced identical content"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, c := newTestTools(t)
			p := writeTestFile(t, dir, "f.txt", content)
			old := time.Now().Add(-time.Hour).Truncate(time.Second)
			require.NoError(t, os.Chtimes(p, old, old))
			before, err := os.Stat(p)
			require.NoError(t, err)
			res := execute(c, tt.call, tt.args)
			assert.True(t, res.IsError)
			assert.True(t, strings.HasSuffix(res.Content, want), res.Content)
			assert.Nil(t, res.Display)
			assert.Equal(t, content, readTestFile(t, dir, "f.txt"))
			after, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, old, after.ModTime(), "not rewritten")
			assert.True(t, os.SameFile(before, after), "not replaced")
		})
	}
}

func TestEditFileOtherErrors(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t, WithMaxEditSize(100))
	writeTestFile(t, dir, "big.txt", strings.Repeat("x", 101))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin"), []byte("a\x00b"), 0o644))
	_, err := run(t, c, "edit_file", map[string]any{"path": "big.txt", "oldText": "x", "newText": "y"})
	assert.ErrorContains(t, err, "big.txt is 101B, larger than the 100B that edits load")
	_, err = run(t, c, "edit_file", map[string]any{"path": "bin", "oldText": "a", "newText": "y"})
	assert.ErrorContains(t, err, "bin is a binary file (application/octet-stream, 3B)")
	_, err = run(t, c, "edit_file", map[string]any{"path": "missing.txt", "oldText": "a", "newText": "y"})
	assert.EqualError(t, err, "file not found: missing.txt")
	_, err = run(t, c, "edit_file", map[string]any{"path": "big.txt", "oldText": "", "newText": "y"})
	assert.ErrorIs(t, err, llmtoolkit.ErrInvalidArguments, "the schema refuses an empty oldText")
	assert.Equal(t, strings.Repeat("x", 101), readTestFile(t, dir, "big.txt"))
}

func TestEditFileKeepsModeAndOnlyTheRegion(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	content := "keep\u00a0this \r\nfix “me”  \r\nkeep “that”\r\n"
	p := writeTestFile(t, dir, "f.txt", content)
	require.NoError(t, os.Chmod(p, 0o600))
	mustRun(t, c, "edit_file", map[string]any{"path": "f.txt", "oldText": `fix "me"`, "newText": "fixed"})
	assert.Equal(t, "keep\u00a0this \r\nfixed  \r\nkeep “that”\r\n", readTestFile(t, dir, "f.txt"))
	info, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

func TestMultiEdit(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, "f.txt", "a = 1\nb = 2\nc = 3\n")
	got := mustRun(t, c, "multi_edit", map[string]any{"path": "f.txt", "edits": []any{
		map[string]any{"oldText": "a = 1", "newText": "a = 10"},
		map[string]any{"oldText": "a = 10\nb", "newText": "a = 10\nbee"}, // sees the first edit
		map[string]any{"oldText": "c = 3", "newText": "c = 30"},
	}})
	assert.True(t, strings.HasPrefix(got, "Successfully applied 3 edits to f.txt.\n\n"), got)
	assert.Contains(t, got, "+1 a = 10")
	assert.Equal(t, "a = 10\nbee = 2\nc = 30\n", readTestFile(t, dir, "f.txt"))

	// Typed Go arguments work too.
	mustRun(t, c, "multi_edit", map[string]any{"path": "f.txt", "edits": []map[string]string{{"oldText": "bee", "newText": "b"}}})
	assert.Equal(t, "a = 10\nb = 2\nc = 30\n", readTestFile(t, dir, "f.txt"))
}

func TestMultiEditFailureTouchesNothing(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, "f.txt", "x y x\n")
	for _, tt := range []struct {
		edits []any
		err   string
	}{
		{[]any{map[string]any{"oldText": "y", "newText": "z"}, map[string]any{"oldText": "x", "newText": "w"}},
			"edit 2 of 2 failed, nothing was written: found 2 occurrences of the text in f.txt: the text must be unique; provide more context to make it unique"},
		{[]any{map[string]any{"oldText": "y", "newText": "z"}, map[string]any{"oldText": "y", "newText": "w"}},
			"edit 2 of 2 failed, nothing was written: could not find the exact text in f.txt"},
		{[]any{map[string]any{"oldText": "y", "newText": "y"}},
			"edit 1 of 1 failed, nothing was written: no changes made to f.txt: the replacement produced identical content"},
	} {
		_, err := run(t, c, "multi_edit", map[string]any{"path": "f.txt", "edits": tt.edits})
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), tt.err), err.Error())
		assert.Equal(t, "x y x\n", readTestFile(t, dir, "f.txt"))
	}
	_, err := run(t, c, "multi_edit", map[string]any{"path": "f.txt", "edits": []any{}})
	assert.ErrorIs(t, err, llmtoolkit.ErrInvalidArguments)
	_, err = run(t, c, "multi_edit", map[string]any{"path": "f.txt", "edits": []any{map[string]any{"oldText": "x"}}})
	assert.ErrorIs(t, err, llmtoolkit.ErrInvalidArguments)
}

// FuzzEditFile checks the tool's promise on real files: either exactly one
// region changed and the rest is byte-identical, or an error and the file
// unchanged.
func FuzzEditFile(f *testing.F) {
	f.Add("Hello, world!", "world", "testing")
	f.Add("foo foo foo", "foo", "bar")
	f.Add("first\r\nsecond\r\n", "second", "X")
	f.Add("\ufeffa “b” c\n", `"b"`, "d")
	f.Add("line one   \nline two  \n", "line one\nline two\n", "r\n")
	dir := f.TempDir()
	c, err := New(dir)
	require.NoError(f, err)
	defer c.Close()
	f.Fuzz(func(t *testing.T, content, oldText, newText string) {
		p := filepath.Join(dir, "f.txt")
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		_, err := c.Resolve(context.Background(), llmtoolkit.Call{Name: "edit_file",
			Arguments: map[string]any{"path": "f.txt", "oldText": oldText, "newText": newText}})
		data, rerr := os.ReadFile(p)
		require.NoError(t, rerr)
		got := string(data)
		if err != nil {
			if got != content {
				t.Fatalf("error %v but the file changed", err)
			}
			return
		}
		styled := textedit.Styled(content, newText)
		// One region [s, e) of content was replaced by styled.
		s := 0
		for s < len(content) && s < len(got) && content[s] == got[s] {
			s++
		}
		found := false
		for start := min(s, len(content)); start >= 0 && !found; start-- {
			if !strings.HasPrefix(got[start:], styled) {
				continue
			}
			suffix := got[start+len(styled):]
			if strings.HasSuffix(content, suffix) && len(content)-len(suffix) >= start && content[:start] == got[:start] {
				found = true
			}
		}
		if !found {
			t.Fatalf("the change is not one region replaced by the new text:\n%q\n%q", content, got)
		}
	})
}
