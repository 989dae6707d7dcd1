package agent

import (
	"context"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
)

// BashToolName and BashCommandArgument are the tool and argument under
// which the rules see every command a call runs or types: a rule on
// bash's "command" holds for each tool that declares its commands
// ([llmtoolkit.Tool.Commands]: codetools' exec_command, shell and
// write_stdin),
// whatever it is named.
const (
	BashToolName        = "bash"
	BashCommandArgument = "command"
)

// commandsOf returns what the rules see of the commands call runs and
// the lines it types into a running program (a terminal), each as a bash
// call of that command line.
func commandsOf(ctx context.Context, call llmtoolkit.Call, tool llmtoolkit.Tool) (run, typed []target, err error) {
	cmds := tool.Commands
	if cmds == nil {
		return nil, nil, nil
	}
	as := func(line string) target {
		return target{call: llmtoolkit.Call{ID: call.ID, Name: BashToolName, Arguments: map[string]any{BashCommandArgument: line}}}
	}
	runLines, typedLines, err := cmds.Lines(ctx, call.Arguments)
	if err != nil {
		return nil, nil, llmtoolkit.Deny(call.Name, fmt.Sprintf("the tool cannot say what the call runs or types: %v", err))
	}
	for _, l := range runLines {
		run = append(run, as(l))
	}
	for _, l := range typedLines {
		typed = append(typed, as(l))
	}
	return run, typed, nil
}

// denyCommands refuses call when a deny rule matches one of the commands
// it runs or the lines it types; who names what set the arguments.
func (p *Permissions) denyCommands(call llmtoolkit.Call, run, typed []target, who string) error {
	for _, set := range []struct {
		what    string
		targets []target
	}{{"runs", run}, {"types", typed}} {
		for i := range set.targets {
			if r := firstMatch(p.deny, &set.targets[i], true); r != nil {
				return llmtoolkit.Deny(call.Name, fmt.Sprintf("the host's rule %s forbids the command this call %s%s", r.desc, set.what, who))
			}
		}
	}
	return nil
}

// allowsCommands reports whether allow rules let call run without
// asking because of its commands: it runs commands, types nothing, and
// an allow rule matches each command as bash's. Lines typed into a
// terminal are never allowed by bash's rules (what a program makes of
// them is the program's): the host allows the terminal as a whole.
func (p *Permissions) allowsCommands(run, typed []target) bool {
	if len(run) == 0 || len(typed) > 0 {
		return false
	}
	for i := range run {
		if firstMatch(p.allow, &run[i], false) == nil {
			return false
		}
	}
	return true
}
