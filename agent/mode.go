package agent

import (
	"context"
	"fmt"

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

// modeState is the mode of a run: mode until iteration from, next after.
// It is immutable; a switch stores a new one.
type modeState struct {
	mode, next Mode
	from       int // 0: next applies to every call
}

// at returns the mode of a call made in iteration n (ok: n is known).
func (s *modeState) at(n int, ok bool) Mode {
	if !ok || s.from == 0 || n >= s.from {
		return s.next
	}
	return s.mode
}

// Mode returns the run's current mode: the one the guard offers tools for
// (after a switch, the new one).
func (p *Permissions) Mode() Mode { return p.mode.Load().next }

// ModeAt returns the mode that applies to a call made with ctx: a switch
// made during iteration N applies from iteration N+1, so the other calls of
// the turn that approved a plan are still checked in the old mode.
func (p *Permissions) ModeAt(ctx context.Context) Mode {
	n, ok := llmtoolkit.IterationFrom(ctx)
	return p.mode.Load().at(n, ok)
}

// SetMode switches the run to m. With a ctx that carries an agent loop's
// iteration N ([llmtoolkit.IterationFrom]), the switch applies from
// iteration N+1; otherwise at once. The guard's tool list changes at once,
// so the model is offered the new mode's tools in its next turn.
func (p *Permissions) SetMode(ctx context.Context, m Mode) error {
	if err := m.check(); err != nil {
		return err
	}
	for {
		old := p.mode.Load()
		n, ok := llmtoolkit.IterationFrom(ctx)
		st := &modeState{mode: old.at(n, ok), next: m}
		if ok {
			st.from = n + 1
		}
		if p.mode.CompareAndSwap(old, st) {
			return nil
		}
	}
}
