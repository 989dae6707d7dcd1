package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
)

// ErrUnconfined is wrapped by the error for a sub-agent's tool that runs
// commands no OS sandbox confines to its workspace
// ([llmtoolkit.CommandArguments].Sandbox): the workspace is refused, or
// the call, before anything runs.
var ErrUnconfined = fmt.Errorf("%w: a tool runs commands outside the workspace's confinement", ErrWorkspace)

// confinedTools is a sub-agent's resolver in a workspace: it runs only the
// tools it lists, and of those that run commands only the ones an OS
// sandbox confines to the workspace, whatever the host's factory made
// (without a sandbox, bash writes the parent's tree as well as any).
type confinedTools struct {
	inner llmtoolkit.Resolver
	w     *Workspaces
	ws    Workspace
}

// confine wraps the tools the factory made for ws, or refuses them.
func (w *Workspaces) confine(tools llmtoolkit.Resolver, ws Workspace) (llmtoolkit.Resolver, error) {
	c := &confinedTools{inner: tools, w: w, ws: ws}
	for _, t := range tools.Tools() {
		if err := c.check(t); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// check refuses a tool whose commands may write outside the workspace, or
// read the parent's tree or its repository.
func (c *confinedTools) check(t llmtoolkit.Tool) error {
	if t.Commands == nil || c.w.cfg.AllowUnconfinedCommands {
		return nil
	}
	fix := "give the workspace's code tools a sandbox: codetools.New(ws.Root, codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite}), codetools.WithSandboxRequired()); " +
		"or leave the tool out, or set WorkspaceConfig.AllowUnconfinedCommands"
	sb := t.Commands.Sandbox
	if sb == nil {
		return fmt.Errorf("%w: the sub-agent's tool %s runs commands no OS sandbox confines (its Commands.Sandbox is nil), so they could write the parent's tree %s; %s",
			ErrUnconfined, t.Name, c.w.cfg.Root, fix)
	}
	for _, d := range sb.Writable {
		if !within(c.ws.Root, d) {
			return fmt.Errorf("%w: the sub-agent's tool %s runs commands that may write %s, outside its workspace %s; %s", ErrUnconfined, t.Name, d, c.ws.Root, fix)
		}
	}
	for _, d := range sb.Readable {
		for _, hidden := range []string{c.w.cfg.Root, c.ws.GitDir} {
			if hidden != "" && (within(d, hidden) || within(hidden, d)) {
				return fmt.Errorf("%w: the sub-agent's tool %s runs commands that may read %s, which holds or is inside %s (the parent's tree or repository); keep it out of codetools.WithSandbox's SandboxPolicy.Readable", ErrUnconfined, t.Name, d, hidden)
			}
		}
	}
	return nil
}

// within reports whether p is dir or inside it (both absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	return err == nil && filepath.IsAbs(p) && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Tools lists the inner tools that may run in the workspace.
func (c *confinedTools) Tools() []llmtoolkit.Tool {
	all := c.inner.Tools()
	out := make([]llmtoolkit.Tool, 0, len(all))
	for _, t := range all {
		if c.check(t) == nil {
			out = append(out, t)
		}
	}
	return out
}

// LookupTool finds a tool that may run in the workspace.
func (c *confinedTools) LookupTool(name string) (llmtoolkit.Tool, bool) {
	t, ok := llmtoolkit.FindTool(c.inner, name)
	if !ok || c.check(t) != nil {
		return llmtoolkit.Tool{}, false
	}
	return t, true
}

// Resolve runs a listed, confined tool; any other call is refused before
// it runs.
func (c *confinedTools) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	t, ok := llmtoolkit.FindTool(c.inner, call.Name)
	if !ok {
		return "", fmt.Errorf("%w: %s is not among the sub-agent's tools (a workspace runs only the tools its resolver lists, whose facts it checks)", ErrUnconfined, call.Name)
	}
	if err := c.check(t); err != nil {
		return "", err
	}
	return c.inner.Resolve(ctx, call)
}
