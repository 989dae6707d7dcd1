package agent

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// PreToolUseHook runs before a call, after the mode and the rules: it may
// refuse the call ([Deny]) or change its arguments ([AllowWith]); [Allow]
// (the zero Decision) lets the next hook and the callback decide. It cannot
// approve a call: only the mode, an allow rule or the callback do.
type PreToolUseHook func(ctx context.Context, call llmtoolkit.Call, tool llmtoolkit.Tool) Decision

// PostToolUseHook runs after a call that succeeded and returns the content
// the model sees (content itself to keep it). call holds the arguments the
// tool ran with.
type PostToolUseHook func(ctx context.Context, call llmtoolkit.Call, content string) string

// PostToolUseFailureHook is told of a call that failed once it ran (not of
// refused calls): err is the tool's error.
type PostToolUseFailureHook func(ctx context.Context, call llmtoolkit.Call, err error)

// StopHook runs when the model answers without tool calls: returning ok
// asks the loop to go on, with message as the next user message (see
// [Permissions.Stop]).
type StopHook func(ctx context.Context, resp agentloop.Response) (message string, ok bool)

// Hooks are the host's functions around each call, run in the order given.
type Hooks struct {
	// PreToolUse run before each call (check step 4), each seeing the
	// call as it is, under its tool's name: a hook that vets bash's
	// commands belongs in Matched, under a matcher naming bash, or it
	// misses those exec_command, shell and write_stdin run or type.
	PreToolUse []PreToolUseHook
	// PostToolUse run after each call that succeeded.
	PostToolUse []PostToolUseHook
	// PostToolUseFailure run after each call that failed.
	PostToolUseFailure []PostToolUseFailureHook
	// Stop run when the model answers without tool calls.
	Stop []StopHook
	// Matched are hooks for the calls of some tools only, run after the
	// hooks above, in order. Those of a matcher that names bash also
	// see every command the other tools run or type (see [HookMatcher]).
	Matched []HookMatcher
}

// HookMatcher holds hooks for the calls of the tools Tool names. The
// hooks above see each call as it is; a matcher decides on the effect,
// as the rules do: when Tool matches bash ([BashToolName]), its hooks
// also run, for a call of any other tool that declares its commands
// ([llmtoolkit.Tool.Commands]: codetools' exec_command, shell, and the
// lines write_stdin enters into a terminal), once for each command the
// call runs and each line it types, with bash's call of that line:
// {"command": LINE} ([BashCommandArgument]), the call's ID, and the
// tool that runs it. So a hook on bash that vets commands vets them
// whatever tool runs them. A bash call is seen once, as it is (bash in
// the background, and WithBashSession's persistent bash, included).
//
// On a command, a PreToolUse hook may refuse the call ([Deny]) or leave
// it pending ([Pending]); a changed command ([AllowWith]) refuses the
// call, since no other tool's arguments can be rewritten from it. The
// PostToolUse hooks run once for each command, in order, each given the
// content the previous one returned; the PostToolUseFailure hooks once
// for each command. The lines typed are those the guard checked before
// the call ran (as its rules saw them).
type HookMatcher struct {
	// Tool is the tool's name or a glob of names ("bash", "mcp_*"), as a
	// [Rule]'s Tool; empty or "*" matches every tool, bash included (so
	// its hooks see the call and its commands).
	Tool string
	// PreToolUse run before each call Tool matches, after [Hooks].PreToolUse.
	PreToolUse []PreToolUseHook
	// PostToolUse run after each such call that succeeded.
	PostToolUse []PostToolUseHook
	// PostToolUseFailure run after each such call that failed.
	PostToolUseFailure []PostToolUseFailureHook
}

// matcher is a compiled HookMatcher.
type matcher struct {
	name  rule // its Tool, as a rule's
	bash  bool // Tool matches bash: the hooks see every call's commands
	hooks HookMatcher
}

// compileMatchers checks the hook matchers.
func compileMatchers(ms []HookMatcher) ([]matcher, error) {
	out := make([]matcher, 0, len(ms))
	for i, m := range ms {
		if m.Tool != "" && !doublestar.ValidatePattern(m.Tool) {
			return nil, fmt.Errorf("%w: hook matcher %d: invalid tool pattern %q", ErrInvalidConfig, i, m.Tool)
		}
		rs, err := compileRules("hook matcher", []Rule{{Tool: m.Tool}})
		if err != nil {
			return nil, err
		}
		out = append(out, matcher{name: rs[0], bash: rs[0].nameMatches(BashToolName), hooks: m})
	}
	return out, nil
}

// sees returns the calls m's hooks see of call: call itself when m
// names its tool, and its commands as bash's calls when m names bash.
func (m *matcher) sees(call llmtoolkit.Call, cmds commandCalls) (self bool, commands []llmtoolkit.Call) {
	self = m.name.nameMatches(call.Name)
	if m.bash && !cmds.isCall(call) {
		commands = append(append(commands, cmds.run...), cmds.typed...)
	}
	return self, commands
}

// guarded runs fn, turning a panic into a *llmtoolkit.PanicError logged
// with its stack: a hook's panic fails the call, never the host. The log
// names the panic value's type, not the value, which may quote the call's
// secrets; the value is in the returned error, which the loop scrubs.
func guarded(ctx context.Context, logger *slog.Logger, what string, call llmtoolkit.Call, fn func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := &llmtoolkit.PanicError{Value: fmt.Sprintf("%s panicked: %v", what, v), Stack: debug.Stack()}
			logger.ErrorContext(ctx, "agent: "+what+" panicked",
				slog.String("tool", call.Name), slog.String("panic_type", fmt.Sprintf("%T", v)), slog.String("stack", string(pe.Stack)))
			err = pe
		}
	}()
	fn()
	return nil
}

// preCommand runs h, a PreToolUse hook of a matcher naming bash, on cmd,
// one of call's commands (see [HookMatcher]).
func (p *Permissions) preCommand(ctx context.Context, call, cmd llmtoolkit.Call, tool llmtoolkit.Tool, h PreToolUseHook) error {
	var d Decision
	if err := guarded(ctx, p.logger, "a PreToolUse hook", cmd, func() { d = h(ctx, withArguments(cmd), tool) }); err != nil {
		return err
	}
	switch {
	case d.Pending != nil:
		return &pendingError{err: d.Pending}
	case d.Deny:
		msg := d.Message
		if msg == "" {
			msg = "refused by a PreToolUse hook on the command"
		}
		return llmtoolkit.Deny(call.Name, msg)
	case d.Arguments != nil && !reflect.DeepEqual(d.Arguments, cmd.Arguments):
		return llmtoolkit.Deny(call.Name, "a PreToolUse hook on bash changed a command this call runs or types, which cannot be applied to "+call.Name+"'s arguments: the call was not run")
	}
	return nil
}

// post runs the PostToolUse hooks on a call's content: those of
// [Hooks], then the matchers' on the call and on its commands.
func (p *Permissions) post(ctx context.Context, call llmtoolkit.Call, cmds commandCalls, content string) (string, error) {
	run := func(h PostToolUseHook, c llmtoolkit.Call) error {
		return guarded(ctx, p.logger, "a PostToolUse hook", c, func() { content = h(ctx, c, content) })
	}
	for _, h := range p.cfg.Hooks.PostToolUse {
		if err := run(h, call); err != nil {
			return "", err
		}
	}
	for i := range p.matchers {
		m := &p.matchers[i]
		self, commands := m.sees(call, cmds)
		for _, h := range m.hooks.PostToolUse {
			if self {
				if err := run(h, call); err != nil {
					return "", err
				}
			}
			for _, c := range commands {
				if err := run(h, withArguments(c)); err != nil {
					return "", err
				}
			}
		}
	}
	return content, nil
}

// postFailure runs the PostToolUseFailure hooks on a call's error
// (those of [Hooks], then the matchers' on the call and on its commands)
// and returns the error the call ends with.
func (p *Permissions) postFailure(ctx context.Context, call llmtoolkit.Call, cmds commandCalls, err error) error {
	run := func(h PostToolUseFailureHook, c llmtoolkit.Call) {
		if perr := guarded(ctx, p.logger, "a PostToolUseFailure hook", c, func() { h(ctx, c, err) }); perr != nil {
			err = fmt.Errorf("%w (and %v)", err, perr)
		}
	}
	for _, h := range p.cfg.Hooks.PostToolUseFailure {
		run(h, call)
	}
	for i := range p.matchers {
		m := &p.matchers[i]
		self, commands := m.sees(call, cmds)
		for _, h := range m.hooks.PostToolUseFailure {
			if self {
				run(h, call)
			}
			for _, c := range commands {
				run(h, withArguments(c))
			}
		}
	}
	return err
}

// Stop runs the Stop hooks, in order, when the model answers without tool
// calls; its method value is an agentloop.Options.Stop. When one or more
// hooks ask to go on, their messages (joined by a blank line) become the
// next user message. A hook that panics is logged and counts as not asking.
func (p *Permissions) Stop(ctx context.Context, resp agentloop.Response) (string, bool) {
	var msgs []string
	for _, h := range p.cfg.Hooks.Stop {
		var msg string
		var ok bool
		if err := guarded(ctx, p.logger, "a Stop hook", llmtoolkit.Call{}, func() { msg, ok = h(ctx, resp) }); err != nil || !ok {
			continue
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 {
		return "", false
	}
	return strings.Join(msgs, "\n\n"), true
}
