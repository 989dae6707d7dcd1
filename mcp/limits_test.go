package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mib = 1 << 20

// hugeText is ~20 MiB of lines, more than an MCP frame holds.
func hugeText() string {
	var b strings.Builder
	for i := 0; b.Len() < 20*mib; i++ {
		fmt.Fprintf(&b, "line %d of a very long tool answer\n", i)
	}
	return b.String()
}

// bigSide is one side of a ~9 MiB edit, as an edit's Display shows it.
func bigSide(c byte) string { return strings.Repeat(string(c)+"<&>\n", 9*mib/5) }

// deepValue nests maps n levels deep.
func deepValue(n int) any {
	var v any = "bottom"
	for range n {
		v = map[string]any{"d": v}
	}
	return v
}

// panicJSON is a Display payload value whose encoding panics.
type panicJSON struct{}

func (panicJSON) MarshalJSON() ([]byte, error) { panic("marshal kaboom") }

// newHostileFixture offers tools whose answers are too big or too odd to
// send as they are, and echo, to see that the session goes on.
func newHostileFixture() *llmtoolkittest.Fake {
	empty := map[string]any{"type": "object", "properties": map[string]any{}}
	tool := func(name string) llmtoolkit.Tool { return llmtoolkit.MustTool(name, "Hostile "+name+".", empty) }
	show := func(d llmtoolkit.Display, text string) func(context.Context, llmtoolkit.Call) (string, error) {
		return func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			llmtoolkit.Show(ctx, d)
			return text, nil
		}
	}
	f := newFixture()
	f.Add(tool("huge"), func(context.Context, llmtoolkit.Call) (string, error) { return hugeText(), nil })
	f.Add(tool("hugeerror"), func(context.Context, llmtoolkit.Call) (string, error) {
		return "", errors.New(hugeText())
	})
	f.Add(tool("controls"), func(context.Context, llmtoolkit.Call) (string, error) {
		return strings.Repeat("\x01", 3*mib), nil // 18 MiB once escaped as \u0001
	})
	f.Add(tool("html"), func(context.Context, llmtoolkit.Call) (string, error) {
		return strings.Repeat("<", 3*mib), nil // 18 MiB once escaped as \u003c
	})
	f.Add(tool("bigdiff"), show(llmtoolkit.Display{Kind: "diff", Payload: map[string]any{
		"path": "a.txt", "before": bigSide('a'), "after": bigSide('b'), "added": 1,
	}}, "edited a.txt"))
	f.Add(tool("manystrings"), show(llmtoolkit.Display{Kind: "matches", Payload: map[string]any{
		"lines": manyStrings(),
	}}, "found"))
	f.Add(tool("deepdisplay"), show(llmtoolkit.Display{Kind: "deep", Payload: map[string]any{"v": deepValue(1500)}}, "deep"))
	f.Add(tool("panicdisplay"), show(llmtoolkit.Display{Kind: "bad", Payload: map[string]any{"v": panicJSON{}}}, "done anyway"))
	return f
}

// manyStrings is 500,000 short strings: ~20 MiB of JSON that cutting
// strings cannot shrink enough.
func manyStrings() []any {
	out := make([]any, 500_000)
	for i := range out {
		out[i] = fmt.Sprintf("match number %d here", i)
	}
	return out
}

// execTestServer returns the test binary as a server in the given
// serverEnv mode (see TestMain).
func execTestServer(ctx context.Context, mode string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"="+mode)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestServerCapsLargeResults calls tools whose answers would not fit in one
// MCP frame (the SDK's 16 MiB line limit) through the SDK's client: each
// call succeeds, with its text and Display cut with a marker, and the
// session goes on.
func TestServerCapsLargeResults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("tens of MiB of results through the SDK: -short leaves it out (CI's race pass); the plain run has it")
	}
	cs := sdkClient(t, newHostileFixture())
	tests := []struct {
		tool      string
		wantError bool
		wantText  string // the text's start, cut
		check     func(t *testing.T, payload map[string]any)
	}{
		{tool: "huge", wantText: hugeText()},
		{tool: "hugeerror", wantError: true, wantText: hugeText()},
		{tool: "controls", wantText: strings.Repeat("\x01", 3*mib)},
		{tool: "html", wantText: strings.Repeat("<", 3*mib)},
		{tool: "bigdiff", wantText: "edited a.txt", check: func(t *testing.T, p map[string]any) {
			assert.Equal(t, "a.txt", p["path"], "short values are kept")
			assert.Equal(t, float64(1), p["added"])
			for key, full := range map[string]string{"before": bigSide('a'), "after": bigSide('b')} {
				got, ok := p[key].(string)
				require.True(t, ok, "%s is still a string", key)
				require.Less(t, len(got), len(full), "%s is cut", key)
				assert.True(t, strings.HasSuffix(got, truncatedMark), "%s ends with the marker", key)
				assert.True(t, strings.HasPrefix(full, strings.TrimSuffix(got, truncatedMark)), "%s keeps its start", key)
				assert.Greater(t, jsonStringLen(got), maxDisplayBytes/3, "%s keeps a fair share of the budget", key)
			}
		}},
		{tool: "manystrings", wantText: "found", check: func(t *testing.T, p map[string]any) {
			assert.Equal(t, true, p["truncated"], "a payload that cannot be cut is replaced: %v", p)
			assert.Contains(t, p["reason"], "MB")
		}},
		{tool: "deepdisplay", wantText: "deep", check: func(t *testing.T, p map[string]any) {
			assert.Equal(t, true, p["truncated"], "a payload nested too deep is replaced: %v", p)
			assert.Contains(t, p["reason"], "nested")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			if tt.tool == "hugeerror" || tt.tool == "controls" || tt.tool == "html" {
				requireStress(t) // cut as "huge" is; TestCapText covers the escapes
			}
			res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: tt.tool})
			require.NoError(t, err, "the answer must fit in a frame")
			assert.Equal(t, tt.wantError, res.IsError, "a successful call is never reported as failed because of its size")
			wire, err := json.Marshal(res)
			require.NoError(t, err)
			assert.Less(t, len(wire), maxTextBytes+maxDisplayBytes+4096, "the answer is capped well below the frame")

			require.Len(t, res.Content, 1)
			text := res.Content[0].(*sdk.TextContent).Text
			if len(tt.wantText) <= maxTextBytes/6 {
				assert.Equal(t, tt.wantText, text)
			} else {
				kept, marker, found := strings.Cut(text, "\n\n[Output truncated")
				require.True(t, found, "the cut text says so: %.100q", text[max(0, len(text)-200):])
				assert.True(t, strings.HasPrefix(tt.wantText, kept), "the text keeps its start")
				assert.Greater(t, len(kept), mib, "the text keeps a fair share")
				assert.Contains(t, marker, "MB")
			}
			if tt.check != nil {
				require.Contains(t, res.Meta, DisplayMetaKey, "the Display is sent")
				d := res.Meta[DisplayMetaKey].(map[string]any)
				assert.NotEmpty(t, d["kind"])
				tt.check(t, d["payload"].(map[string]any))
			}
		})
	}
	// The session is still up.
	res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
	require.NoError(t, err)
	assert.Equal(t, "still here", res.Content[0].(*sdk.TextContent).Text)
}

// TestServerSurvivesHostileToolsAsProcess runs the hostile fixture in a
// server process and calls it with this package's client: a Display whose
// encoding panics loses the Display, not the process, and a 20 MiB answer
// arrives cut.
func TestServerSurvivesHostileToolsAsProcess(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	c, err := Connect(ctx, CommandTransport(execTestServer(ctx, "hostile")))
	require.NoError(t, err)
	defer func() { _ = c.Close() }()

	res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "panicdisplay"})
	require.False(t, res.IsError, "the server process must survive a Display that panics when encoded: %s", res.Content)
	assert.Equal(t, "done anyway", res.Content)
	assert.Nil(t, res.Display, "the Display that cannot be encoded is not sent")

	out, err := c.Resolve(ctx, llmtoolkit.Call{Name: "huge"})
	require.NoError(t, err)
	assert.Contains(t, out, "[Output truncated")
	assert.Less(t, len(out), maxTextBytes)

	out, err = c.Resolve(ctx, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "alive"}})
	require.NoError(t, err)
	assert.Equal(t, "alive", out)
}

func TestCapText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		max  int
		cut  bool
	}{
		{"fits", "hello", 100, false},
		{"exact fit", "hello", jsonStringLen("hello"), false},
		{"one over", "hello!", jsonStringLen("hello"), true},
		{"ascii", strings.Repeat("a", 10_000), 1000, true},
		{"controls", strings.Repeat("\x01\n\t", 10_000), 1000, true},
		{"html", strings.Repeat("<&>", 10_000), 1000, true},
		{"quotes", strings.Repeat(`"\`, 10_000), 1000, true},
		{"multibyte", strings.Repeat("é日本😀", 10_000), 1000, true},
		{"invalid UTF-8", strings.Repeat("a\xff\xfe", 10_000), 1000, true},
		{"line separators", strings.Repeat("\u2028\u2029", 10_000), 1000, true},
		{"tiny budget", strings.Repeat("a", 10_000), 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := capText(tt.in, tt.max)
			assert.Equal(t, tt.cut, cut)
			assertCapped(t, tt.in, got, tt.max)
		})
	}
}

// assertCapped checks one capText result against its input.
func assertCapped(t *testing.T, in, got string, limit int) {
	t.Helper()
	data, err := json.Marshal(got)
	require.NoError(t, err)
	assert.Equal(t, len(data), jsonStringLen(got), "jsonStringLen agrees with encoding/json")
	if jsonStringLen(in) <= limit {
		assert.Equal(t, in, got)
		return
	}
	kept, found := strings.CutSuffix(got, truncatedMark)
	require.True(t, found, "a cut string ends with the marker")
	assert.True(t, strings.HasPrefix(in, kept), "a cut string keeps its start")
	assert.LessOrEqual(t, len(data), max(limit, jsonStringLen(truncatedMark)))
	if utf8.ValidString(in) {
		assert.True(t, utf8.ValidString(got), "no rune is split")
	}
}

func FuzzCapText(f *testing.F) {
	for _, seed := range []string{"", "a", "<\x00\u2028\xff", strings.Repeat("é", 40)} {
		f.Add(seed, 10)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = abs(limit) % 200
		got, _ := capText(s, limit)
		assertCapped(t, s, got, limit)
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// FuzzDisplayPayload caps arbitrary JSON payloads to a small budget: the
// result is valid JSON within the budget, with the kind kept.
func FuzzDisplayPayload(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":"` + strings.Repeat("x", 300) + `"}`, `{"a":[1,2,"yy"],"b":{"c":"zzzz"}}`, `{"a":"\u003c\u0001"}`} {
		f.Add([]byte(seed), 200)
	}
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		var payload map[string]any
		if json.Unmarshal(data, &payload) != nil {
			return
		}
		limit = 150 + abs(limit)%2000
		raw, _, err := displayJSON(llmtoolkit.Display{Kind: "k", Payload: payload}, limit)
		require.NoError(t, err)
		require.True(t, json.Valid(raw))
		assert.LessOrEqual(t, len(raw), limit)
		var d llmtoolkit.Display
		require.NoError(t, json.Unmarshal(raw, &d))
		assert.Equal(t, "k", d.Kind)
	})
}

func TestDisplayJSONKeepsSmallPayloads(t *testing.T) {
	t.Parallel()
	d := llmtoolkit.Display{Kind: "diff", Payload: map[string]any{"path": "a<b>.txt", "n": 3}}
	raw, cut, err := displayJSON(d, maxDisplayBytes)
	require.NoError(t, err)
	assert.False(t, cut)
	want, err := json.Marshal(d)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, raw), "a payload that fits is sent as it is: %s", raw)
}
