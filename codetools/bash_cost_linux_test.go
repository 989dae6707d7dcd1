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
		{"bubblewrap workspace-write", []Option{WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "bubblewrap"}), WithSandboxRequired()}},
		{"landlock workspace-write", []Option{WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "landlock"}), WithSandboxRequired()}},
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

// BenchmarkBashCall times one bash call of "echo hi" in each way bash runs
// its commands here (go test -bench BashCall -run '^$' ./codetools/).
func BenchmarkBashCall(b *testing.B) {
	modes := []struct {
		name string
		opts []Option
	}{
		{"contained", nil},
		{"bubblewrap", []Option{WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "bubblewrap"}), WithSandboxRequired()}},
		{"landlock", []Option{WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "landlock"}), WithSandboxRequired()}},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			ct, err := New(b.TempDir(), m.opts...)
			if err != nil {
				b.Skipf("%s: %v", m.name, err)
			}
			defer ct.Close()
			for b.Loop() {
				if _, err := run(b, ct, "bash", map[string]any{"command": "echo hi"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
