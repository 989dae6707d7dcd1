package codetools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/stretchr/testify/assert"
)

// TestDeepPathAnswersByDeadline: on a tree 2,000 folders deep, the tools
// that take the deep path answer within about their 2 s deadline. Path
// resolution made one Lstat of the whole prefix per component and the
// ignore rules above a walk one read per level, both from the root
// (quadratic, 9 to 37 s per call), without looking at the context. Each
// tool runs in a child process capped at 60 s, so the old code fails
// instead of stalling the run. Each answers, or fails with the deadline's
// error, within 4 s (0.2 to 1.1 s on an idle machine; 21 to 41 s before).
// Without LLMTOOLKIT_STRESS only read_file and tree run.
func TestDeepPathAnswersByDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a 2,000-deep chain")
	}
	const depth = 2000
	deepDir := "chain" + strings.Repeat("/d", depth-1) // the bottom folder, holding "f"
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": deepDir + "/new.txt", "content": "hello\n"}},
		{"append_to_file", map[string]any{"path": deepDir + "/f", "content": "y"}},
		{"edit_file", map[string]any{"path": deepDir + "/f", "oldText": "x", "newText": "z"}},
		{"grep", map[string]any{"pattern": "x", "path": deepDir}},
		{"glob", map[string]any{"pattern": "**/f", "path": deepDir}},
		{"tree", map[string]any{"path": deepDir}},
		{"read_file", map[string]any{"path": deepDir + "/f"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			if !stress() && tc.tool != "read_file" && tc.tool != "tree" {
				// read_file resolves the deep path, tree reads the ignore
				// rules above its walk: the two quadratic paths.
				requireStress(t)
			}
			inChild(t, 60*time.Second, func(t *testing.T) {
				dir, c := newTestTools(t)
				makeChain(t, dir, depth)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				began := time.Now()
				out, err := c.Resolve(ctx, llmtoolkit.Call{Name: tc.tool, Arguments: tc.args})
				took := time.Since(began)
				t.Logf("%s on a %d-deep path: %v (err %v, %d bytes out)", tc.tool, depth, took, err, len(out))
				if err != nil {
					// On a loaded machine the call may run out of time: it
					// must then say so, at its deadline.
					assert.ErrorIs(t, err, context.DeadlineExceeded)
				}
				assert.Less(t, took, 4*time.Second, "the 2 s deadline holds")
			})
		})
	}
}
