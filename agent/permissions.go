package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/llmtoolkit/llmtoolkit"
)

// ErrInvalidConfig is wrapped by the errors of [New], [SpawnAgent] and
// [Permissions.SetMode] for an unusable configuration.
var ErrInvalidConfig = errors.New("agent: invalid configuration")

// DefaultEditTools are the tools [Config.EditTools] names when it is nil:
// the file edits of package codetools.
var DefaultEditTools = []string{"write_file", "edit_file", "multi_edit", "append_to_file", "apply_patch"}

// Kind is what the guard knows a tool does, from its definition.
type Kind string

// The kinds of tools.
const (
	// KindReadOnly: annotated read-only (Annotations.ReadOnly).
	KindReadOnly Kind = "read_only"
	// KindEdit: a file edit, named in [Config.EditTools].
	KindEdit Kind = "edit"
	// KindOther: any other listed tool (bash, http calls that change
	// things, the host's own tools): treated as mutating.
	KindOther Kind = "other"
	// KindUnknown: a tool the guarded resolver does not list.
	KindUnknown Kind = "unknown"
)

// Config configures the [Permissions] of a run.
type Config struct {
	// Mode is the run's first mode; empty means [ModeDefault].
	Mode Mode
	// Deny rules refuse the calls they match (check step 2).
	Deny []Rule
	// Allow rules let the calls they match run without asking CanUseTool
	// (check step 3).
	Allow []Rule
	// Hooks run around each call (PreToolUse is check step 4).
	Hooks Hooks
	// CanUseTool decides the calls nothing before it let through (check
	// step 5). Nil allows them: the mode, the rules and the hooks still
	// apply.
	CanUseTool CanUseTool
	// EditTools names the tools that edit files (allowed without asking in
	// [ModeAcceptEdits]). Nil means [DefaultEditTools].
	EditTools []string
	// Logger receives the panics of hooks and callbacks. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Permissions is the permission state of one run: its mode (which a plan
// approval changes), its compiled rules, hooks and callback, and the
// budget of its sub-agents. Make one per run with [New]; it is safe for
// concurrent use by the run's calls. Reusing one for a later run is safe
// for the mode (each run's calls see the current version, see
// [Permissions.ModeAt]), but the later run shares the sub-agent budget.
type Permissions struct {
	cfg         Config
	deny, allow []rule
	matchers    []matcher // cfg.Hooks.Matched, compiled
	edits       map[string]bool
	logger      *slog.Logger
	mode        atomic.Pointer[modeState]
	own         *lineage // this one alone, for the calls of its guard
	subAgents   budget   // of the sub-agents of the run, at every depth
}

// New checks cfg and returns the permissions of a run.
func New(cfg Config) (*Permissions, error) {
	if cfg.Mode == "" {
		cfg.Mode = ModeDefault
	}
	if err := cfg.Mode.check(); err != nil {
		return nil, err
	}
	deny, err := compileRules("deny", cfg.Deny)
	if err != nil {
		return nil, err
	}
	allow, err := compileRules("allow", cfg.Allow)
	if err != nil {
		return nil, err
	}
	matchers, err := compileMatchers(cfg.Hooks.Matched)
	if err != nil {
		return nil, err
	}
	if cfg.EditTools == nil {
		cfg.EditTools = DefaultEditTools
	}
	p := &Permissions{cfg: cfg, deny: deny, allow: allow, matchers: matchers, edits: map[string]bool{}, logger: cfg.Logger}
	for _, n := range cfg.EditTools {
		p.edits[n] = true
	}
	if p.logger == nil {
		p.logger = slog.Default()
	}
	p.mode.Store(&modeState{mode: cfg.Mode, before: cfg.Mode})
	p.own = &lineage{perms: []*Permissions{p}}
	return p, nil
}

// Kind returns what the guard knows tool does: [KindReadOnly] for a tool
// annotated read-only, [KindEdit] for one named in Config.EditTools,
// [KindOther] else. (A call for a tool the resolver does not list is
// [KindUnknown].)
func (p *Permissions) Kind(tool llmtoolkit.Tool) Kind {
	switch {
	case tool.Annotations != nil && tool.Annotations.ReadOnly:
		return KindReadOnly
	case p.edits[tool.Name]:
		return KindEdit
	}
	return KindOther
}

// offers reports whether the guard lists tool in mode m: in the plan mode
// only read-only tools and the plan-mode tool, in the others every tool but
// the plan-mode tool.
func (p *Permissions) offers(m Mode, tool llmtoolkit.Tool) bool {
	if tool.Name == PlanToolName {
		return m == ModePlan
	}
	return m != ModePlan || p.Kind(tool) == KindReadOnly
}

// check runs the permission checks on call, in the documented order, and
// returns the call to run (its arguments possibly changed) or the error
// that refuses it: a *llmtoolkit.DeniedError, invalid changed arguments, or
// a hook's or the callback's panic.
func (p *Permissions) check(ctx context.Context, call llmtoolkit.Call, tool llmtoolkit.Tool, found bool) (llmtoolkit.Call, error) {
	call, _, err := p.checkCommands(ctx, call, tool, found)
	return call, err
}

// checkCommands is check, also returning the commands the call to run
// runs and types (as the rules and the hooks saw them), for the
// PostToolUse hooks.
func (p *Permissions) checkCommands(ctx context.Context, call llmtoolkit.Call, tool llmtoolkit.Tool, found bool) (llmtoolkit.Call, commandCalls, error) {
	mode := p.ModeAt(ctx)
	kind := KindUnknown
	if found {
		kind = p.Kind(tool)
	} else {
		tool = llmtoolkit.Tool{Name: call.Name}
	}
	var none commandCalls
	// 1. The mode.
	ask := true
	switch {
	case call.Name == PlanToolName && found:
		if mode != ModePlan {
			return call, none, llmtoolkit.Deny(call.Name, fmt.Sprintf("the run is not in plan mode (mode %s): there is no plan to approve", mode))
		}
		ask = false // approving the plan is the host's check
	case mode == ModeBypass:
		ask = false
	case mode == ModePlan && kind != KindReadOnly:
		return call, none, llmtoolkit.Deny(call.Name, "plan mode allows only read-only tools: explore, then call "+PlanToolName+" with your plan and wait for its approval")
	case mode == ModeAcceptEdits && (kind == KindReadOnly || kind == KindEdit):
		ask = false
	}
	// The paths the call names, as its tool will open them; a path the
	// tool would refuse is refused here, whatever the mode.
	t, err := targetOf(ctx, call, tool)
	if err != nil {
		return call, none, err
	}
	// The commands it runs and the lines it types, as bash's.
	cmds, err := commandsOf(ctx, call, tool)
	if err != nil {
		return call, none, err
	}
	// 2. Deny rules, whatever the mode; 3. allow rules.
	if r := firstMatch(p.deny, &t, true); r != nil {
		return call, none, llmtoolkit.Deny(call.Name, "the host's rule "+r.desc+" forbids this call")
	}
	if err := p.denyCommands(call, cmds, ""); err != nil {
		return call, none, err
	}
	if ask && (firstMatch(p.allow, &t, false) != nil || p.allowsCommands(cmds)) {
		ask = false
	}
	// 4. PreToolUse hooks: those on every call, then the matchers'.
	pre := func(h PreToolUseHook) error {
		var d Decision
		if err := guarded(ctx, p.logger, "a PreToolUse hook", call, func() { d = h(ctx, withArguments(call), tool) }); err != nil {
			return err
		}
		var err error
		call, cmds, err = p.apply(ctx, call, cmds, tool, found, d, "a PreToolUse hook")
		return err
	}
	for _, h := range p.cfg.Hooks.PreToolUse {
		if err := pre(h); err != nil {
			return call, none, err
		}
	}
	for i := range p.matchers {
		m := &p.matchers[i]
		for _, h := range m.hooks.PreToolUse {
			self, commands := m.sees(call, cmds)
			if self {
				if err := pre(h); err != nil {
					return call, none, err
				}
				_, commands = m.sees(call, cmds) // the call's arguments may have changed
			}
			for _, c := range commands {
				if err := p.preCommand(ctx, call, c, tool, h); err != nil {
					return call, none, err
				}
			}
		}
	}
	// 5. The callback.
	if ask && p.cfg.CanUseTool != nil {
		var d Decision
		if err := guarded(ctx, p.logger, "the CanUseTool callback", call, func() { d = p.cfg.CanUseTool(ctx, withArguments(call), tool) }); err != nil {
			return call, none, err
		}
		return p.apply(ctx, call, cmds, tool, found, d, "the host")
	}
	return call, cmds, nil
}

// apply applies a hook's or the callback's decision to call, whose
// commands are cmds; it returns the call and its commands.
func (p *Permissions) apply(ctx context.Context, call llmtoolkit.Call, cmds commandCalls, tool llmtoolkit.Tool, found bool, d Decision, who string) (llmtoolkit.Call, commandCalls, error) {
	if d.Pending != nil {
		return call, cmds, &pendingError{err: d.Pending}
	}
	if d.Deny {
		msg := d.Message
		if msg == "" {
			msg = "refused by " + who
		}
		return call, cmds, llmtoolkit.Deny(call.Name, msg)
	}
	if d.Arguments == nil {
		return call, cmds, nil
	}
	call.Arguments = copyArguments(d.Arguments) // the hook may keep and change the map it returned
	if found {
		if err := tool.ValidateArguments(call.Arguments); err != nil {
			return call, cmds, fmt.Errorf("the arguments set by %s are invalid: %w", who, err)
		}
	}
	t, err := targetOf(ctx, call, tool)
	if err != nil {
		return call, cmds, err
	}
	if r := firstMatch(p.deny, &t, true); r != nil {
		return call, cmds, llmtoolkit.Deny(call.Name, "the host's rule "+r.desc+" forbids this call (with the arguments set by "+who+")")
	}
	if cmds, err = commandsOf(ctx, call, tool); err != nil {
		return call, cmds, err
	}
	return call, cmds, p.denyCommands(call, cmds, " (with the arguments set by "+who+")")
}

// pendingError marks the error of a [Pending] decision, so the guard
// returns it without reporting a refusal.
type pendingError struct{ err error }

func (e *pendingError) Error() string { return e.err.Error() }
func (e *pendingError) Unwrap() error { return e.err }

// withArguments returns call with a deep copy of its arguments, for a hook
// or the callback: what they change in place is not what the tool runs.
func withArguments(call llmtoolkit.Call) llmtoolkit.Call {
	call.Arguments = copyArguments(call.Arguments)
	return call
}
