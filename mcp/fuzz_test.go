package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// FuzzToolHandlerArguments sends arbitrary bytes as a call's arguments: the
// handler must always answer with one text result, never a protocol error,
// and anything that is not a JSON object must be an error result.
func FuzzToolHandlerArguments(f *testing.F) {
	for _, seed := range []string{``, `null`, `{}`, `{"text":"hi"}`, `{"text":1}`, `"x"`, `[1]`, `{`, `{"text":"a","times":1e309}`, "\x00", `{"text":"\ud800"}`} {
		f.Add([]byte(seed))
	}
	h := toolHandler(newFixture(), "echo", newStateSigner(nil), slog.New(slog.DiscardHandler))
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := h(context.Background(), &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "echo", Arguments: raw}})
		require.NoError(t, err)
		require.NotNil(t, res)
		require.Len(t, res.Content, 1)
		text, ok := res.Content[0].(*sdk.TextContent)
		require.True(t, ok)
		var v any
		isObject := json.Unmarshal(raw, &v) == nil && (v == nil || isMap(v))
		if !isObject {
			require.True(t, res.IsError, "arguments %q answered %q", raw, text.Text)
		}
		if !res.IsError {
			require.Equal(t, v.(map[string]any)["text"], text.Text)
		}
	})
}

func isMap(v any) bool { _, ok := v.(map[string]any); return ok }

// FuzzFromSDKTool converts arbitrary tool definitions as a server may send
// them: it must never panic, and what it accepts must be a valid tool.
func FuzzFromSDKTool(f *testing.F) {
	for _, seed := range []string{
		`{"name":"a","inputSchema":{"type":"object"}}`,
		`{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`,
		`{"name":"a.b","inputSchema":{"type":"object"}}`,
		`{"name":"a","inputSchema":{"type":"object","properties":{"x":{"$ref":"http://example.com/s.json"}}}}`,
		`{"name":"a","inputSchema":{"type":"array"}}`,
		`{"name":"","inputSchema":[]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var st sdk.Tool
		if json.Unmarshal(data, &st) != nil {
			return
		}
		tool, err := fromSDKTool(&st, "fuzz", DefaultMaxSchemaNodes)
		if err == nil {
			require.NoError(t, tool.Validate())
		}
	})
}

// FuzzCheckMessage checks arbitrary lines as the stdio transport does: a
// line it passes on is one JSON-RPC message, decoded as the SDK decodes
// it, and a line it refuses gets a valid JSON-RPC error answer whose id is
// null, a string or a number.
func FuzzCheckMessage(f *testing.F) {
	for _, b := range badLines() {
		f.Add([]byte(b.line))
	}
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`, `{"jsonrpc":"2.0","id":1.5,"method":"x","params":{"s":"\xff"}}`,
		`{"JSONRPC":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.Trim(line, " \t\r\n")
		if len(line) == 0 || bytes.ContainsAny(line, "\r\n") {
			return
		}
		decoded, code, id, msg := checkMessage(line)
		if code == 0 {
			require.True(t, json.Valid(line))
			require.Equal(t, byte('{'), line[0])
			want, err := jsonrpc.DecodeMessage(line)
			require.NoError(t, err)
			require.Equal(t, want, decoded)
			return
		}
		require.Nil(t, decoded)
		require.NotEmpty(t, msg)
		answer := errorAnswer(id, code, msg)
		var a struct {
			ID    any            `json:"id"`
			Error map[string]any `json:"error"`
		}
		require.NoError(t, json.Unmarshal(answer, &a), "%s", answer)
		require.Equal(t, float64(code), a.Error["code"])
		switch a.ID.(type) {
		case nil, string, float64:
		default:
			t.Fatalf("id %v in %s", a.ID, answer)
		}
	})
}

// FuzzMetaProtocolVersion: the peek at a request's body that routes it
// (HTTPHandler.currentProtocol) takes any bytes a client sends without
// panicking, and finds the version wherever a message of the body names it.
func FuzzMetaProtocolVersion(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	f.Add([]byte(`[{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}},{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}]`))
	f.Add([]byte(`{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`))
	f.Add([]byte(`{"params":null}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, body []byte) {
		v := metaProtocolVersion(body)
		if v != "" && !bytes.Contains(body, []byte(v)) && !bytes.Contains(body, []byte(`\u`)) {
			t.Fatalf("version %q not in the body %q", v, body)
		}
	})
}
