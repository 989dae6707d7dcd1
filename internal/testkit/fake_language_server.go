package testkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"unicode/utf16"
)

// FakeLanguageServerEnv names the behaviour of the fake language server.
const FakeLanguageServerEnv = "LLMTOOLKIT_FAKE_LSP"

// FakeLanguageServer is a hostile language server for the tests: call it
// first in TestMain; when FakeLanguageServerEnv is set, the test binary is
// the server, and it exits. Run the binary (os.Executable) with the
// variable set to one of:
//
//	ok        answers initialize, publishes one error per line holding BAD
//	          (and a warning per MEH), in UTF-16 columns, and for a line
//	          "READ PATH [WORD]" a warning whose message is what opening
//	          PATH (relative to its working folder) gave: "read: TEXT"
//	          (only its last line holding WORD, when given) or
//	          "cannot read: ERROR"
//	crash     like ok, but exits at the first didChange
//	hang      never answers initialize
//	flood     publishes 2,000 diagnostics for the file and 2,000 other files
//	stderr    writes 1 GiB to stderr, then behaves as ok
//	stubborn  like ok, ignores shutdown and exit, and has a child (sleep)
//
// Every mode answers definition (the file's first line, columns 2-3) and
// rename (see the code).
func FakeLanguageServer() {
	mode := os.Getenv(FakeLanguageServerEnv)
	if mode == "" {
		return
	}
	fakeServer(mode)
	os.Exit(0)
}

func fakeServer(mode string) {
	r := bufio.NewReader(os.Stdin)
	w := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "Content-Length: %d\r\n\r\n%s", len(data), data)
		w.Flush()
	}
	if mode == "stderr" {
		chunk := []byte(strings.Repeat("x", 1<<20-1) + "\n")
		for range 1024 {
			os.Stderr.Write(chunk)
		}
	}
	if mode == "stubborn" {
		child := exec.Command("sleep", "300")
		_ = child.Start()
		fmt.Fprintf(os.Stderr, "child %d\n", child.Process.Pid)
	}
	publish := func(uri string, version int, text string) {
		var diags []map[string]any
		for i, line := range strings.Split(text, "\n") {
			if c := strings.Index(line, "BAD"); c >= 0 {
				c = len(utf16.Encode([]rune(line[:c])))
				diags = append(diags, map[string]any{"range": map[string]any{
					"start": map[string]any{"line": i, "character": c}, "end": map[string]any{"line": i, "character": c + 3}},
					"severity": 1, "code": "bad", "source": "fake", "message": "BAD is not allowed"})
			}
			if p, ok := strings.CutPrefix(line, "READ "); ok {
				p, word, _ := strings.Cut(p, " ")
				msg := "cannot read: "
				if data, err := os.ReadFile(p); err != nil {
					msg += err.Error()
				} else {
					msg = "read: " + string(data)
					for _, l := range strings.Split(string(data), "\n") {
						if word != "" && strings.Contains(l, word) {
							msg = "read: " + l
						}
					}
				}
				diags = append(diags, map[string]any{"range": map[string]any{
					"start": map[string]any{"line": i, "character": 0}, "end": map[string]any{"line": i, "character": 1}},
					"severity": 2, "message": msg})
			}
			if c := strings.Index(line, "MEH"); c >= 0 {
				diags = append(diags, map[string]any{"range": map[string]any{
					"start": map[string]any{"line": i, "character": c}, "end": map[string]any{"line": i, "character": c + 3}},
					"severity": 2, "code": 7, "message": "MEH is discouraged"})
			}
		}
		if diags == nil {
			diags = []map[string]any{}
		}
		send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
			"params": map[string]any{"uri": uri, "version": version, "diagnostics": diags}})
	}
	for {
		n := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			fmt.Sscanf(line, "Content-Length: %d", &n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				TextDocument struct {
					URI     string `json:"uri"`
					Version int    `json:"version"`
					Text    string `json:"text"`
				} `json:"textDocument"`
				ContentChanges []struct {
					Text string `json:"text"`
				} `json:"contentChanges"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		switch m.Method {
		case "initialize":
			if mode == "hang" {
				select {}
			}
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"capabilities": map[string]any{
				"positionEncoding": "utf-16", "textDocumentSync": 1, "definitionProvider": true}}})
		case "textDocument/didOpen":
			if mode == "flood" {
				big := make([]map[string]any, 2_000)
				for i := range big {
					big[i] = map[string]any{"range": map[string]any{"start": map[string]any{"line": 0, "character": 0},
						"end": map[string]any{"line": 0, "character": 1}}, "severity": 1, "message": "flood"}
				}
				for i := range 2_000 {
					send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
						"params": map[string]any{"uri": fmt.Sprintf("file:///flood/%d.fake", i), "diagnostics": big[:1]}})
				}
				send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
					"params": map[string]any{"uri": m.Params.TextDocument.URI, "version": m.Params.TextDocument.Version, "diagnostics": big}})
				continue
			}
			publish(m.Params.TextDocument.URI, m.Params.TextDocument.Version, m.Params.TextDocument.Text)
		case "textDocument/didChange":
			if mode == "crash" {
				os.Exit(3)
			}
			if len(m.Params.ContentChanges) > 0 {
				publish(m.Params.TextDocument.URI, m.Params.TextDocument.Version, m.Params.ContentChanges[0].Text)
			}
		case "textDocument/definition":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": []any{map[string]any{"uri": m.Params.TextDocument.URI,
				"range": map[string]any{"start": map[string]any{"line": 0, "character": 2}, "end": map[string]any{"line": 0, "character": 3}}}}})
		case "textDocument/rename":
			// Renames the first three bytes of the file; newName "outside"
			// also edits a file outside the workspace, "sibling" also b.fake
			// beside it.
			var rp struct {
				Params struct {
					NewName string `json:"newName"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &rp)
			edit := []any{map[string]any{"range": map[string]any{"start": map[string]any{"line": 0, "character": 0},
				"end": map[string]any{"line": 0, "character": 3}}, "newText": rp.Params.NewName}}
			uri := m.Params.TextDocument.URI
			changes := map[string]any{uri: edit}
			switch rp.Params.NewName {
			case "outside":
				changes["file:///llmtoolkit-elsewhere/x.fake"] = edit
			case "sibling":
				changes[uri[:strings.LastIndex(uri, "/")+1]+"b.fake"] = edit
			}
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"changes": changes}})
		case "shutdown":
			if mode == "stubborn" {
				continue
			}
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
		case "exit":
			if mode == "stubborn" {
				continue
			}
			return
		default:
			if len(m.ID) > 0 && m.Method != "" {
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
			}
		}
	}
}
