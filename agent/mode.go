package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/llmtoolkit/llmtoolkit"
)

// Mode is a run's permission mode.
type Mode string

// The permission modes.
const (
	// ModeDefault: every call goes through the rules, the hooks and the
	// callback.
	ModeDefault Mode = "default"
	// ModePlan: only tools annotated read-only run, plus the plan-mode tool
	// ([PlanToolName]); the guard offers only those.
	ModePlan Mode = "plan"
	// ModeAcceptEdits: read-only tools and file edits ([Config.EditTools])
	// run without asking the callback; other tools are asked.
	ModeAcceptEdits Mode = "accept_edits"
	// ModeBypass: nothing is asked (the callback is not called); the deny rules
	// and the hooks still apply, the plan-mode tool is refused, and a trace
	// wrapper still records every call.
	ModeBypass Mode = "bypass"
)

// valid reports whether m is one of the modes.
func (m Mode) valid() bool {
	switch m {
	case ModeDefault, ModePlan, ModeAcceptEdits, ModeBypass:
		return true
	}
	return false
}

// check returns the error for a mode that is not one of the four.
func (m Mode) check() error {
	if m.valid() {
		return nil
	}
	return fmt.Errorf("%w: unknown mode %q (use default, plan, accept_edits or bypass)", ErrInvalidConfig, m)
}

// modeState is one version of a run's mode: the mode from a switch on, the
// mode before it, and the turn that made it. It is immutable; a switch
// stores a new one linked to the last.
type modeState struct {
	mode, before Mode
	version      uint64
	turn         llmtoolkit.Turn // zero: made outside a turn, applies at once
	prev         *modeState      // nil past maxModeHistory
	depth        int
}

// maxModeHistory bounds the states kept for the calls of older turns: only
// a turn that made more switches than this sees an older state's mode.
const maxModeHistory = 32

type turnsKey struct{}

// withParentTurn returns the context of a sub-agent started by a call made
// with ctx: the turns of its ancestors travel with it, so that a switch
// made in one of them does not apply to the sub-agent either.
func withParentTurn(ctx context.Context) context.Context {
	t, ok := llmtoolkit.ScopeFrom(ctx).Turn, llmtoolkit.ScopeFrom(ctx).Turn != (llmtoolkit.Turn{})
	if !ok {
		return ctx
	}
	parents, _ := ctx.Value(turnsKey{}).([]llmtoolkit.Turn)
	return context.WithValue(ctx, turnsKey{}, append(slices.Clip(parents), t))
}

// inTurn reports whether a call made with ctx belongs to turn t, or was
// made by a sub-agent that a call of turn t started.
func inTurn(ctx context.Context, t llmtoolkit.Turn) bool {
	if own, ok := llmtoolkit.ScopeFrom(ctx).Turn, llmtoolkit.ScopeFrom(ctx).Turn != (llmtoolkit.Turn{}); ok && own == t {
		return true
	}
	parents, _ := ctx.Value(turnsKey{}).([]llmtoolkit.Turn)
	return slices.Contains(parents, t)
}

// Mode returns the run's current mode: the one the guard offers tools for
// (after a switch, the new one).
func (p *Permissions) Mode() Mode { return p.mode.Load().mode }

// Version returns the number of mode switches so far: each [Permissions.SetMode]
// makes a new version.
func (p *Permissions) Version() uint64 { return p.mode.Load().version }

// ModeAt returns the mode that applies to a call made with ctx: the newest
// version but those made during the call's own turn ([llmtoolkit.Scope].Turn)
// or a turn that started its sub-agent. So the other calls of the turn
// that approved a plan are still checked in the old mode, and every call of
// a later turn, of a sub-agent spawned later, or of another run sharing
// these permissions, in the new one: a switch takes effect by version, never
// by comparing iteration numbers.
func (p *Permissions) ModeAt(ctx context.Context) Mode {
	s := p.mode.Load()
	for s.turn != (llmtoolkit.Turn{}) && inTurn(ctx, s.turn) {
		if s.prev == nil {
			return s.before
		}
		s = s.prev
	}
	return s.mode
}

// SetMode switches the run to m, as a new version of its mode. With a ctx
// made during a turn of an agent loop ([llmtoolkit.Scope].Iteration), the
// switch applies to every call but the other calls of that turn (see
// [Permissions.ModeAt]); otherwise at once. The guard's tool list changes
// at once, so the model is offered the new mode's tools in its next turn.
func (p *Permissions) SetMode(ctx context.Context, m Mode) error {
	if err := m.check(); err != nil {
		return err
	}
	turn := llmtoolkit.ScopeFrom(ctx).Turn
	for {
		old := p.mode.Load()
		st := &modeState{mode: m, before: old.mode, version: old.version + 1, turn: turn, prev: old, depth: old.depth + 1}
		if st.depth > maxModeHistory {
			st.prev, st.depth = nil, 0
		}
		if p.mode.CompareAndSwap(old, st) {
			return nil
		}
	}
}
