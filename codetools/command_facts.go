package codetools

// The command facts of the tools that run commands
// ([llmtoolkit.Tool.Commands]): a permission layer checks exec_command's
// cmd and the lines write_stdin enters as it checks bash's command.

import (
	"context"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit"
)

// commandSandbox declares what the sandbox lets the commands reach
// (llmtoolkit.CommandArguments.Sandbox), nil when no sandbox runs them.
func (c *CodeTools) commandSandbox() *llmtoolkit.CommandSandbox {
	if c.sbx.backend == nil {
		return nil
	}
	s := &llmtoolkit.CommandSandbox{Writable: []string{}, Readable: []string{c.dir}}
	if c.sbx.policy.Mode == SandboxWorkspaceWrite {
		s.Writable = []string{c.dir}
	}
	for _, r := range c.sbx.policy.Readable {
		if abs, err := filepath.Abs(r); err == nil {
			s.Readable = append(s.Readable, abs)
		}
	}
	return s
}

// commandFact declares the argument a tool runs with bash -c.
func commandFact(name string) *llmtoolkit.CommandArguments {
	return &llmtoolkit.CommandArguments{Names: []string{name}}
}

// typedFact declares what write_stdin types: the lines its chars enter
// into the session named by session_id, the text typed there before
// included. A session that is not the caller's enters nothing (the call
// fails with ErrNoJob).
func (c *CodeTools) typedFact() *llmtoolkit.CommandArguments {
	return &llmtoolkit.CommandArguments{
		Typed: func(ctx context.Context, args map[string]any) ([]string, error) {
			chars := stringArg(args, "chars", "")
			if chars == "" || c.jobs == nil {
				return nil, nil
			}
			j, err := c.jobs.Get(intArg(args, "session_id", 0), jobOwner(ctx))
			if err != nil {
				return nil, nil
			}
			return j.Typed(chars), nil
		},
	}
}

// workdirFact declares exec_command's workdir: a folder inside the root,
// canonical as the tool cds into it. It is declared as a list of one
// path (llmtoolkit.PathArguments.Lists), so that the rules on "path"
// cover the folder a command runs in as they cover the files a patch
// touches.
func (c *CodeTools) workdirFact() *llmtoolkit.PathArguments {
	return &llmtoolkit.PathArguments{
		Lists: []string{"workdir"},
		List: func(ctx context.Context, _, value string) ([]string, error) {
			r, err := c.canonical(ctx, "workdir", value, true)
			if err != nil {
				return nil, err
			}
			return []string{filepath.ToSlash(r)}, nil
		},
	}
}
