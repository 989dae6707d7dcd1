package lsp

import (
	"bufio"
	"io"
	"os"
	"testing"

	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
)

// The fake language server is this test binary, run again with
// testkit.FakeLanguageServerEnv set to its behaviour (see
// testkit.FakeLanguageServer).
func TestMain(m *testing.M) {
	testkit.FakeLanguageServer()
	os.Exit(m.Run())
}

// fakeSpec is a catalog entry running the fake server in mode, for .fake
// files.
func fakeSpec(t *testing.T, mode string) Spec {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Name: "fake-" + mode, Command: []string{exe}, Env: []string{testkit.FakeLanguageServerEnv + "=" + mode},
		Languages: map[string]string{".fake": "fake"}}
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }
