package codetools

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// documentedKeys is the JSON form of every built-in Display kind, as the
// README and the package doc ("Display payloads") document it. Renaming a field or its tag fails
// TestDisplayKeysAreDocumented: update the docs with this list.
var documentedKeys = map[string][]string{
	DisplayFile:    {"path", "content", "startLine", "endLine", "totalLines", "truncated"},
	DisplayDiff:    {"path", "diff", "truncated", "added", "removed", "countsBounded", "firstChangedLine", "replacements", "diagnostics"},
	DisplayProcess: {"command", "exitCode", "output", "outputBytes", "durationMs", "timedOut", "outputFile", "outputFileCut", "sandbox"},
	DisplayMatches: {"pattern", "total", "shown", "items"},
	DisplayFiles:   {"pattern", "total", "shown", "paths"},
	DisplayWebpage: {"url", "status", "contentType", "truncated"},
	DisplayPatch:   {"files", "omitted"},
	DisplayShell:   {"commands"},
	DisplayMemory:  {"command", "path", "file", "newPath", "newFile", "diff", "truncated", "added", "removed"},
	// "shell" commands
	"shell.commands": {"command", "exitCode", "output", "outputBytes", "durationMs", "timedOut", "outputFile", "outputFileCut", "sandbox"},
	DisplayJob: {"event", "jobId", "command", "terminal", "tty", "state", "exitCode", "reason", "output", "screen",
		"outputBytes", "durationMs", "logFile", "logFileCut", "sandbox"},
	// "patch" files
	"patch.files":      {"operation", "path", "movedFrom", "diff", "truncated", "added", "removed"},
	DisplayDiagnostics: {"path", "server", "errors", "warnings", "items", "truncated", "note"},
	// "matches" items
	"matches.items": {"path", "line", "text"},
	// "diagnostics" items
	"diagnostics.items": {"path", "line", "column", "severity", "code", "source", "message"},
}

// payloadTypes maps each kind to its payload type.
var payloadTypes = map[string]reflect.Type{
	DisplayFile:         reflect.TypeFor[FilePayload](),
	DisplayDiff:         reflect.TypeFor[DiffPayload](),
	DisplayProcess:      reflect.TypeFor[ProcessPayload](),
	DisplayMatches:      reflect.TypeFor[MatchesPayload](),
	DisplayFiles:        reflect.TypeFor[FilesPayload](),
	DisplayWebpage:      reflect.TypeFor[WebpagePayload](),
	DisplayPatch:        reflect.TypeFor[PatchPayload](),
	DisplayShell:        reflect.TypeFor[ShellPayload](),
	DisplayMemory:       reflect.TypeFor[MemoryPayload](),
	"shell.commands":    reflect.TypeFor[ProcessPayload](),
	DisplayJob:          reflect.TypeFor[JobPayload](),
	"patch.files":       reflect.TypeFor[PatchFile](),
	"matches.items":     reflect.TypeFor[Match](),
	DisplayDiagnostics:  reflect.TypeFor[DiagnosticsPayload](),
	"diagnostics.items": reflect.TypeFor[Diagnostic](),
}

// camelCase is a JSON key in the one style: a lower-case ASCII letter,
// then letters and digits.
func camelCase(key string) bool {
	if key == "" || key[0] < 'a' || key[0] > 'z' {
		return false
	}
	return strings.IndexFunc(key, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0
}

// tagKeys lists the JSON keys of a struct type from its tags, failing on a
// field without a tag, with omitempty, or hidden.
func tagKeys(t *testing.T, typ reflect.Type) []string {
	t.Helper()
	var keys []string
	for f := range typ.Fields() {
		tag, ok := f.Tag.Lookup("json")
		require.True(t, ok, "%s.%s has no json tag", typ.Name(), f.Name)
		name, opts, _ := strings.Cut(tag, ",")
		require.NotEqual(t, "-", name, "%s.%s is hidden", typ.Name(), f.Name)
		assert.Empty(t, opts, "%s.%s: every key is always present", typ.Name(), f.Name)
		keys = append(keys, name)
	}
	return keys
}

func TestDisplayKeysAreDocumented(t *testing.T) {
	t.Parallel()
	require.Len(t, payloadTypes, len(documentedKeys))
	for kind, want := range documentedKeys {
		typ, ok := payloadTypes[kind]
		require.True(t, ok, kind)
		keys := tagKeys(t, typ)
		assert.Equal(t, want, keys, "the keys of %s (%s) differ from the documented list", kind, typ.Name())
		for _, k := range keys {
			assert.True(t, camelCase(k), "%s: key %q is not camelCase", kind, k)
		}
		// The encoding has exactly those keys, whatever the values.
		var m map[string]any
		data, err := json.Marshal(reflect.New(typ).Elem().Interface())
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &m))
		got := make([]string, 0, len(m))
		for k := range m {
			got = append(got, k)
		}
		assert.ElementsMatch(t, want, got, kind)
	}
}

// payloadOf checks that res shows a Display of kind holding a T (a value),
// that the Display decodes from its JSON into the same T, and that its
// JSON keys are the documented ones. It returns the payload.
func payloadOf[T any](t *testing.T, res llmtoolkit.Result, kind string) T {
	t.Helper()
	require.NotNil(t, res.Display, "no Display: %s", res.Content)
	require.Equal(t, kind, res.Display.Kind)
	p, ok := res.Display.Payload.(T)
	require.True(t, ok, "the payload is a %T, not a %T", res.Display.Payload, p)

	data, err := json.Marshal(res.Display)
	require.NoError(t, err)
	var back struct {
		Kind    string          `json:"kind"`
		Payload json.RawMessage `json:"payload"`
	}
	require.NoError(t, json.Unmarshal(data, &back))
	var decoded T
	dec := json.NewDecoder(strings.NewReader(string(back.Payload)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&decoded), "the JSON decodes into its type")
	assert.Equal(t, p, decoded, "the JSON round trip keeps every field")

	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(back.Payload, &m))
	keys := slices.Sorted(maps.Keys(m))
	assert.Equal(t, slices.Sorted(slices.Values(documentedKeys[kind])), keys, "the keys of the %q payload", kind)

	again, err := DecodeDisplay(llmtoolkit.Display{Kind: kind, Payload: decodeGeneric(t, back.Payload)})
	require.NoError(t, err)
	assert.Equal(t, p, again.Payload, "DecodeDisplay gives the typed payload back from its generic form")
	return p
}

func decodeGeneric(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(data, &v))
	return v
}

func TestDecodeDisplay(t *testing.T) {
	t.Parallel()
	typed := DiffPayload{Path: "a.txt", Diff: "--- a/a.txt", Added: 1, FirstChangedLine: 2, Replacements: 1}
	tests := []struct {
		name    string
		in      llmtoolkit.Display
		want    any
		wantErr bool
	}{
		{"typed stays", llmtoolkit.Display{Kind: DisplayDiff, Payload: typed}, typed, false},
		{"pointer becomes a value", llmtoolkit.Display{Kind: DisplayDiff, Payload: &typed}, typed, false},
		{"generic decodes", llmtoolkit.Display{Kind: DisplayDiff, Payload: map[string]any{
			"path": "a.txt", "diff": "--- a/a.txt", "added": 1.0, "firstChangedLine": 2.0, "replacements": 1.0,
		}}, typed, false},
		{"glob paths", llmtoolkit.Display{Kind: DisplayFiles, Payload: map[string]any{"pattern": "*.go", "total": 3.0, "shown": 1.0, "paths": []any{"a.go"}}},
			FilesPayload{Pattern: "*.go", Total: 3, Shown: 1, Paths: []string{"a.go"}}, false},
		{"MCP placeholder keeps its flag", llmtoolkit.Display{Kind: DisplayFile, Payload: map[string]any{"truncated": true, "reason": "too large", "bytes": 9.0}},
			FilePayload{Truncated: true}, false},
		{"other kinds unchanged", llmtoolkit.Display{Kind: "todos", Payload: map[string]any{"x": 1.0}}, map[string]any{"x": 1.0}, false},
		{"wrong types are an error", llmtoolkit.Display{Kind: DisplayProcess, Payload: map[string]any{"exitCode": "two"}}, nil, true},
		{"unencodable is an error", llmtoolkit.Display{Kind: DisplayWebpage, Payload: map[string]any{"url": make(chan int)}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeDisplay(tt.in)
			if tt.wantErr {
				require.Error(t, err)
				assert.Equal(t, tt.in, got, "the Display is returned unchanged")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.in.Kind, got.Kind)
			assert.Equal(t, tt.want, got.Payload)
		})
	}
}

// TestDisplayCounts: the payloads say how much was found and how much is
// shown, how many replacements an edit made, and how a command ended.
func TestDisplayCounts(t *testing.T) {
	t.Parallel()
	t.Run("grep total and shown", func(t *testing.T) {
		ct := newSearchTree(t)
		res := llmtoolkit.Execute(t.Context(), ct, llmtoolkit.Call{Name: "grep", Arguments: map[string]any{"pattern": "Foo", "limit": 2}})
		require.False(t, res.IsError, res.Content)
		p := payloadOf[MatchesPayload](t, res, DisplayMatches)
		assert.Equal(t, 2, p.Shown)
		assert.Len(t, p.Items, 2)
		assert.Greater(t, p.Total, 2, "every match found is counted")
		assert.Contains(t, res.Content, "matches limit reached")
	})
	t.Run("grep nothing found", func(t *testing.T) {
		ct := newSearchTree(t)
		res := llmtoolkit.Execute(t.Context(), ct, llmtoolkit.Call{Name: "grep", Arguments: map[string]any{"pattern": "nowhere to be found"}})
		require.False(t, res.IsError, res.Content)
		p := payloadOf[MatchesPayload](t, res, DisplayMatches)
		assert.Equal(t, MatchesPayload{Pattern: "nowhere to be found", Items: []Match{}}, p, "items is [] in JSON, never null")
	})
	t.Run("glob total and shown", func(t *testing.T) {
		ct := newSearchTree(t)
		res := llmtoolkit.Execute(t.Context(), ct, llmtoolkit.Call{Name: "glob", Arguments: map[string]any{"pattern": "**/*.go", "limit": 1}})
		require.False(t, res.IsError, res.Content)
		p := payloadOf[FilesPayload](t, res, DisplayFiles)
		assert.Equal(t, 1, p.Shown)
		assert.Len(t, p.Paths, 1)
		assert.Greater(t, p.Total, 1)
	})
	t.Run("read_file whole and empty", func(t *testing.T) {
		dir, c := newTestTools(t)
		writeTestFile(t, dir, "f.txt", "one\ntwo\n")
		writeTestFile(t, dir, "empty.txt", "")
		assert.Equal(t, FilePayload{Path: "f.txt", Content: "one\ntwo", StartLine: 1, EndLine: 2, TotalLines: 2},
			payloadOf[FilePayload](t, execute(c, "read_file", map[string]any{"path": "f.txt"}), DisplayFile))
		assert.Equal(t, FilePayload{Path: "empty.txt", StartLine: 1, EndLine: 0},
			payloadOf[FilePayload](t, execute(c, "read_file", map[string]any{"path": "empty.txt"}), DisplayFile))
	})
	t.Run("multi_edit replacements", func(t *testing.T) {
		dir, c := newTestTools(t)
		writeTestFile(t, dir, "f.txt", linesText(10))
		res := execute(c, "multi_edit", map[string]any{"path": "f.txt", "edits": []any{
			map[string]any{"oldText": "line 2\n", "newText": "two\n"},
			map[string]any{"oldText": "line 5\n", "newText": "five\n"},
			map[string]any{"oldText": "line 9\n", "newText": "nine\n"},
		}})
		require.False(t, res.IsError, res.Content)
		p := payloadOf[DiffPayload](t, res, DisplayDiff)
		assert.Equal(t, 3, p.Replacements)
		assert.Equal(t, 3, p.Added)
		assert.Equal(t, 2, p.FirstChangedLine)
	})
	t.Run("bash timeout", func(t *testing.T) {
		ct := newTools(t)
		res := llmtoolkit.Execute(t.Context(), ct, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "echo started; sleep 30", "timeout": 1}})
		require.True(t, res.IsError)
		p := payloadOf[ProcessPayload](t, res, DisplayProcess)
		assert.True(t, p.TimedOut)
		assert.NotZero(t, p.ExitCode)
		assert.Equal(t, "started", p.Output)
		assert.GreaterOrEqual(t, p.DurationMS, int64(900))
		assert.Less(t, p.DurationMS, int64(20_000))
	})
}

// ProcessPayload has one duration, DurationMS, under the key durationMs,
// as trace.Trace and agent.SubAgentPayload name theirs.
func TestProcessPayloadOneDuration(t *testing.T) {
	var durations []string
	for f := range reflect.TypeFor[ProcessPayload]().Fields() {
		if strings.HasPrefix(f.Name, "Duration") {
			durations = append(durations, f.Name)
		}
	}
	assert.Equal(t, []string{"DurationMS"}, durations)

	data, err := json.Marshal(ProcessPayload{DurationMS: 42})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	assert.Equal(t, 42.0, m["durationMs"])

	d, err := DecodeDisplay(llmtoolkit.Display{Kind: DisplayProcess, Payload: map[string]any{"durationMs": 9}})
	require.NoError(t, err)
	assert.Equal(t, ProcessPayload{DurationMS: 9}, d.Payload)
}
