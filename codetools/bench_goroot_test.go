package codetools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// The grep and glob figures of the issue, on the Go source tree. Compare
// with ripgrep and fd with bench/grep.sh, which also checks the match sets.
//
//	go test ./codetools -run XXX -bench 'Grep|Glob' -benchtime 10x -count 5

func gorootSrc(b *testing.B) *CodeTools {
	b.Helper()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command: ", err)
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("no GOROOT/src")
	}
	ct, err := New(src, WithGrepMaxBytes(1<<30))
	require.NoError(b, err)
	b.Cleanup(func() { ct.Close() })
	return ct
}

func benchTool(b *testing.B, name string, args map[string]any) {
	ct := gorootSrc(b)
	call := llmtoolkit.Call{Name: name, Arguments: args}
	for b.Loop() {
		if _, err := ct.Resolve(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGrepLiteralGoroot(b *testing.B) {
	benchTool(b, "grep", map[string]any{"pattern": "Unmarshal", "limit": 1 << 30})
}

func BenchmarkGrepRegexpGoroot(b *testing.B) {
	benchTool(b, "grep", map[string]any{"pattern": `func \w+Error\(`, "limit": 1 << 30})
}

// An alternation of literals: one prefilter needle per branch.
func BenchmarkGrepAlternationGoroot(b *testing.B) {
	benchTool(b, "grep", map[string]any{"pattern": `Dial|Listen`, "limit": 1 << 30})
}

// No literal: the regexp itself scans every byte.
func BenchmarkGrepTrailingSpaceGoroot(b *testing.B) {
	benchTool(b, "grep", map[string]any{"pattern": `\s+$`, "limit": 1 << 30})
}

func BenchmarkGrepIgnoreCaseGoroot(b *testing.B) {
	benchTool(b, "grep", map[string]any{"pattern": "unmarshal", "ignoreCase": true, "limit": 1 << 30})
}

// A Unicode class: prefiltered on the UTF-8 lead bytes of its runes.
func BenchmarkGrepGreekGoroot(b *testing.B) {
	benchTool(b, "grep", map[string]any{"pattern": "[α-ω]+", "limit": 1 << 30})
}

func BenchmarkGrepDefaultLimitGoroot(b *testing.B) {
	benchTool(b, "grep", map[string]any{"pattern": "err"})
}

func BenchmarkGlobGoroot(b *testing.B) {
	benchTool(b, "glob", map[string]any{"pattern": "**/*.go", "limit": 1 << 30})
}

// The kinds of bench/grep.sh that cost the most per match, one sub-benchmark
// each, for profiling in process:
//
//	go test ./codetools -run XXX -bench GrepKinds/ci_alternation -cpuprofile cpu.prof
func BenchmarkGrepKindsGoroot(b *testing.B) {
	for _, k := range []struct {
		name, pattern string
		ignoreCase    bool
	}{
		{"many_matches", "err", false},
		{"ci_many_matches", "err", true},
		{"anchored", "^func", false},
		{"ci_literal", "unmarshal", true},
		{"ci_regex", "func.*error", true},
		{"ci_alternation", "dial|listen|accept", true},
		{"ci_none", "zzqqxxnotthere", true},
		{"none", "zzqqxxnotthere", false},
		{"no_usable_literal", "[0-9]{4}-[0-9]{2}-[0-9]{2}", false},
	} {
		b.Run(k.name, func(b *testing.B) {
			benchTool(b, "grep", map[string]any{"pattern": k.pattern, "ignoreCase": k.ignoreCase, "limit": 1 << 30})
		})
	}
}
