package agent

import (
	"context"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
)

// BashToolName and BashCommandArgument are the tool and argument under
// which the rules and the hooks see every command a call runs or types:
// a rule on bash's "command", and a [HookMatcher] whose Tool matches
// bash, hold for each tool that declares its commands
// ([llmtoolkit.Tool.Commands]: codetools' exec_command, shell and
// write_stdin), whatever it is named.
const (
	BashToolName        = "bash"
	BashCommandArgument = "command"
)

// commandCalls is what one call runs (run) and types into a running
// program (typed), each line as a bash call of that command line, with
// the call's ID.
type commandCalls struct {
	run, typed []llmtoolkit.Call
}

// commandsOf is the one reading of a call's commands that the rules and
// the hooks decide on: the lines tool's declaration
// ([llmtoolkit.CommandArguments.Lines]) finds in call, each as bash's
// call of that line. A tool that declares no commands has none; a
// declaration that cannot read the call refuses it.
func commandsOf(ctx context.Context, call llmtoolkit.Call, tool llmtoolkit.Tool) (commandCalls, error) {
	cmds := tool.Commands
	if cmds == nil {
		return commandCalls{}, nil
	}
	runLines, typedLines, err := cmds.Lines(ctx, call.Arguments)
	if err != nil {
		return commandCalls{}, llmtoolkit.Deny(call.Name, fmt.Sprintf("the tool cannot say what the call runs or types: %v", err))
	}
	return commandCalls{run: asBash(call.ID, runLines), typed: asBash(call.ID, typedLines)}, nil
}

// asBash returns each line as bash's call of it.
func asBash(id string, lines []string) []llmtoolkit.Call {
	if len(lines) == 0 {
		return nil
	}
	out := make([]llmtoolkit.Call, len(lines))
	for i, l := range lines {
		out[i] = llmtoolkit.Call{ID: id, Name: BashToolName, Arguments: map[string]any{BashCommandArgument: l}}
	}
	return out
}

// each calls fn on every command, those run first; what names what the
// call does with it ("runs" or "types"). The first error stops it.
func (c commandCalls) each(fn func(cmd llmtoolkit.Call, what string) error) error {
	for _, set := range []struct {
		what  string
		calls []llmtoolkit.Call
	}{{"runs", c.run}, {"types", c.typed}} {
		for _, cmd := range set.calls {
			if err := fn(cmd, set.what); err != nil {
				return err
			}
		}
	}
	return nil
}

// isCall reports whether the commands are call itself: a bash call that
// runs its own command argument and types nothing. The hooks that see
// bash's calls see it once, as it is.
func (c commandCalls) isCall(call llmtoolkit.Call) bool {
	if call.Name != BashToolName || len(c.run) != 1 || len(c.typed) != 0 {
		return false
	}
	line, ok := call.Arguments[BashCommandArgument].(string)
	return ok && line == c.run[0].Arguments[BashCommandArgument]
}

// denyCommands refuses call when a deny rule matches one of the commands
// it runs or the lines it types; who names what set the arguments.
func (p *Permissions) denyCommands(call llmtoolkit.Call, cmds commandCalls, who string) error {
	return cmds.each(func(cmd llmtoolkit.Call, what string) error {
		t := target{call: cmd}
		if r := firstMatch(p.deny, &t, true); r != nil {
			return llmtoolkit.Deny(call.Name, fmt.Sprintf("the host's rule %s forbids the command this call %s%s", r.desc, what, who))
		}
		return nil
	})
}

// allowsCommands reports whether allow rules let call run without
// asking because of its commands: it runs commands, types nothing, and
// an allow rule matches each command as bash's. Lines typed into a
// terminal are never allowed by bash's rules (what a program makes of
// them is the program's): the host allows the terminal as a whole.
func (p *Permissions) allowsCommands(cmds commandCalls) bool {
	if len(cmds.run) == 0 || len(cmds.typed) > 0 {
		return false
	}
	for _, cmd := range cmds.run {
		t := target{call: cmd}
		if firstMatch(p.allow, &t, false) == nil {
			return false
		}
	}
	return true
}
