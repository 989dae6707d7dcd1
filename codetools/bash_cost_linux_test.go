//go:build linux

package codetools

import (
	"os"
	"slices"
	"testing"
	"time"
)

// TestBashCallCost measures one bash call of "echo hi" (median of 50) with
// the scan alone (main's way), in a PID namespace, and under each sandbox
// backend. It runs only with LLMTOOLKIT_MEASURE=1: a measurement, not a
// check.
func TestBashCallCost(t *testing.T) {
	if os.Getenv("LLMTOOLKIT_MEASURE") == "" {
		t.Skip("a measurement: set LLMTOOLKIT_MEASURE=1")
	}
	modes := []struct {
		name string
		opts []Option
	}{
		{"scan only (main)", []Option{withoutContainment()}},
		{"PID namespace", nil},
		{"bubblewrap workspace-write", []Option{WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "bubblewrap"}), RequireSandbox()}},
		{"landlock workspace-write", []Option{WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "landlock"}), RequireSandbox()}},
	}
	for _, m := range modes {
		ct, err := New(t.TempDir(), m.opts...)
		if err != nil {
			t.Logf("%s: %v", m.name, err)
			continue
		}
		var took []time.Duration
		for range 50 {
			began := time.Now()
			if _, err := run(t, ct, "bash", map[string]any{"command": "echo hi"}); err != nil {
				t.Fatal(err)
			}
			took = append(took, time.Since(began))
		}
		slices.Sort(took)
		t.Logf("%-28s median %v  (min %v, max %v)", m.name, took[25].Round(10*time.Microsecond), took[0].Round(10*time.Microsecond), took[49].Round(10*time.Microsecond))
		ct.Close()
	}
}
