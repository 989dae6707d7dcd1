package agent

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

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
	// PreToolUse run before each call (check step 4).
	PreToolUse []PreToolUseHook
	// PostToolUse run after each call that succeeded.
	PostToolUse []PostToolUseHook
	// PostToolUseFailure run after each call that failed.
	PostToolUseFailure []PostToolUseFailureHook
	// Stop run when the model answers without tool calls.
	Stop []StopHook
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

// post runs the PostToolUse hooks on a call's content.
func (p *Permissions) post(ctx context.Context, call llmtoolkit.Call, content string) (string, error) {
	for _, h := range p.cfg.Hooks.PostToolUse {
		if err := guarded(ctx, p.logger, "a PostToolUse hook", call, func() { content = h(ctx, call, content) }); err != nil {
			return "", err
		}
	}
	return content, nil
}

// postFailure runs the PostToolUseFailure hooks on a call's error and
// returns the error the call ends with.
func (p *Permissions) postFailure(ctx context.Context, call llmtoolkit.Call, err error) error {
	for _, h := range p.cfg.Hooks.PostToolUseFailure {
		if perr := guarded(ctx, p.logger, "a PostToolUseFailure hook", call, func() { h(ctx, call, err) }); perr != nil {
			err = fmt.Errorf("%w (and %v)", err, perr)
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
