package agent

import (
	"context"

	"github.com/llmtoolkit/llmtoolkit"
)

// Decision is the answer of a [CanUseTool] callback or a PreToolUse hook.
// The zero value allows the call unchanged.
type Decision struct {
	// Deny refuses the call.
	Deny bool
	// Message is, for a refusal, what the model reads: why, and what to do
	// instead.
	Message string
	// Arguments, when not nil, replace the call's arguments. They are
	// copied, validated against the tool's schema and checked against the
	// deny rules before the tool runs. (The call a hook or the callback
	// receives holds a copy of the arguments: changing it in place changes
	// nothing.)
	Arguments map[string]any
	// Pending, when not nil, neither runs nor refuses the call: the
	// decision is left to someone who answers later, and the call fails
	// with Pending as its error (build it with [Pending]). The guard does
	// not report it as a refusal (no Observers, no PostToolUse hooks), so
	// a Recorder inside the guard records the call once, when it is
	// decided. Over MCP, mcp.Approval returns the error that asks the
	// client's user through an input-required result.
	Pending error
}

// Allow lets the call run unchanged.
func Allow() Decision { return Decision{} }

// Deny refuses the call; the model reads message.
func Deny(message string) Decision { return Decision{Deny: true, Message: message} }

// AllowWith lets the call run with args instead of its own arguments.
func AllowWith(args map[string]any) Decision { return Decision{Arguments: args} }

// Pending leaves the call undecided: it fails with err, neither run nor
// refused, for whoever answers later to call it again (see
// [Decision].Pending). A nil err allows the call.
func Pending(err error) Decision { return Decision{Pending: err} }

// CanUseTool decides a call that neither the mode nor a rule let through:
// this is where a host asks a person, applies a policy, or rewrites a path.
// tool is the definition the call was validated against (zero, but for its
// name, for a tool the resolver does not list). Use [Permissions.Kind] and
// [Permissions.ModeAt] for what the guard knows of the call.
type CanUseTool func(ctx context.Context, call llmtoolkit.Call, tool llmtoolkit.Tool) Decision
