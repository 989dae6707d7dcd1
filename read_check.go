package llmtoolkit

import (
	"context"

	"github.com/llmtoolkit/llmtoolkit/internal/readcheck"
)

// ReadCheck decides whether the tools may read path (slash-separated,
// relative to the tool's root; a folder's path stands for the folder and
// all it holds): nil allows it, an error refuses it.
type ReadCheck func(ctx context.Context, path string) error

// WithReadCheck returns ctx carrying check, a permission layer's decision
// of what may be read, after the checks ctx carries already; key names
// the layer (comparable, the same for every call it checks), so that a
// layer's check is kept once. What serves every call without being one
// hides every path one of the checks refuses: codetools' language
// servers, which read the tree themselves, cannot open it. Package
// agent's guard adds its own (read_file's check: its rules, hooks and
// callback); a host with a permission layer of its own hands its
// decision this way, beside [Scope.HiddenPaths]' globs. check may be asked
// about every path of the tree, from another goroutine, long after the
// call that carried it (with that call's context, its cancellation
// removed): it must answer at once, without asking a person.
func WithReadCheck(ctx context.Context, key any, check ReadCheck) context.Context {
	return readcheck.With(ctx, readcheck.Check{Key: key, Check: readcheck.Func(check)})
}
