package testkit

import (
	"os"
	"os/exec"
	"testing"
)

// LanguageServer returns the path of a language server the tests run
// against: the one named by env (set by scripts/langservers.sh:
// LLMTOOLKIT_GOPLS, LLMTOOLKIT_PYRIGHT,
// LLMTOOLKIT_TYPESCRIPT_LANGUAGE_SERVER), else bin on PATH. A missing
// server skips the test, and fails it when CI=true (CI installs them).
func LanguageServer(t testing.TB, env, bin string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s=%s does not exist: run scripts/langservers.sh", env, p)
		}
	}
	if p, err := exec.LookPath(bin); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed: eval \"$(bash scripts/langservers.sh)\" sets %s", bin, env)
	}
	t.Skipf("%s is not installed: eval \"$(bash scripts/langservers.sh)\" sets %s", bin, env)
	return ""
}
