package checkpoint

import (
	"context"
	"errors"

	"github.com/llmtoolkit/llmtoolkit"
)

// Probe lists r's tools, with their facts (paths and all), and runs none
// of them: every call it receives answers "allowed". Wrapped in a
// permission layer, it lets [AllowThrough] ask that layer about a write
// without making it.
func Probe(r llmtoolkit.Resolver) llmtoolkit.Resolver { return probe{r} }

type probe struct{ r llmtoolkit.Resolver }

func (p probe) Tools() []llmtoolkit.Tool { return p.r.Tools() }

func (p probe) LookupTool(name string) (llmtoolkit.Tool, bool) { return llmtoolkit.FindTool(p.r, name) }

func (probe) Resolve(context.Context, llmtoolkit.Call) (string, error) { return "allowed", nil }

// errNoProbe refuses a guard whose calls reach something other than a
// Probe.
var errNoProbe = errors.New("checkpoint: AllowThrough's resolver must wrap checkpoint.Probe (a call reached something else)")

// AllowThrough returns an allow function for [WithAllow]: each path a
// rewind would write is asked of guard as the call tool{"path": PATH}
// (write_file, say), with the rewind's context, so that the permission
// layer's deny rules, hooks and callback decide as they would for that
// tool writing the path. guard must be that layer around [Probe] of the
// tools (package agent: perms.Guard(checkpoint.Probe(codetools))): an
// allowed call reaches the probe and writes nothing. A refusal refuses the
// rewind, which then writes nothing.
func AllowThrough(guard llmtoolkit.Resolver, tool string) func(ctx context.Context, path string) error {
	return func(ctx context.Context, path string) error {
		out, err := guard.Resolve(ctx, llmtoolkit.Call{ID: "checkpoint-rewind", Name: tool, Arguments: map[string]any{"path": path}})
		if err != nil {
			return err
		}
		if out != "allowed" {
			return errNoProbe
		}
		return nil
	}
}
