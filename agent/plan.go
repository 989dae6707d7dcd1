package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
)

// PlanToolName is the name of the plan-mode tool ([PlanMode]).
const PlanToolName = "exit_plan_mode"

// PlanDecision is the host's answer to a plan.
type PlanDecision struct {
	// Approved ends the plan phase.
	Approved bool
	// Mode is the mode the run switches to on approval; empty means
	// [ModeDefault].
	Mode Mode
	// Reason is, for a rejection, what the model reads (what to change);
	// for an approval, an optional note added to the confirmation.
	Reason string
}

// ApprovePlan is the host's callback for a plan: it shows it to a person
// or applies a policy.
type ApprovePlan func(ctx context.Context, plan string) PlanDecision

var planTool = llmtoolkit.MustTool(PlanToolName,
	"Ends the read-only plan phase: call it with your plan once you have explored enough. "+
		"When the plan is approved you may use the tools that change things from your next turn; "+
		"when it is rejected you are told why and stay in plan mode.",
	map[string]any{
		"type": "object",
		"properties": map[string]any{
			"plan": map[string]any{"type": "string", "minLength": 1, "description": "The plan, as short numbered steps."},
		},
		"required":             []any{"plan"},
		"additionalProperties": false,
	})

// PlanMode returns the plan-mode tool (exit_plan_mode) for the run whose
// permissions are p. Compose it with the run's other tools under
// p.Guard: the guard offers it in the plan mode only. A call asks approve;
// on approval the run switches to the mode approve chose (from the next
// iteration, see [Permissions.SetMode]) and the model reads a confirmation;
// on rejection, or with a nil approve, it reads a refusal with the reason
// (a [*llmtoolkit.DeniedError]: the breaker does not count it) and the run
// stays in the plan mode.
func PlanMode(p *Permissions, approve ApprovePlan) llmtoolkit.Resolver {
	return &planMode{p: p, approve: approve}
}

type planMode struct {
	p       *Permissions
	approve ApprovePlan
}

func (m *planMode) Tools() []llmtoolkit.Tool { return []llmtoolkit.Tool{planTool} }

func (m *planMode) LookupTool(name string) (llmtoolkit.Tool, bool) {
	if name == PlanToolName {
		return planTool, true
	}
	return llmtoolkit.Tool{}, false
}

func (m *planMode) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	if call.Name != PlanToolName {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	plan, _ := call.Arguments["plan"].(string)
	if m.approve == nil {
		return "", llmtoolkit.Deny(call.Name, "the plan was not approved: this host cannot approve plans")
	}
	d := m.approve(ctx, plan)
	if !d.Approved {
		reason := d.Reason
		if reason == "" {
			reason = "no reason given"
		}
		return "", llmtoolkit.Deny(call.Name, "the plan was rejected: "+reason+". Revise it (you are still in plan mode) and call "+PlanToolName+" again")
	}
	mode := d.Mode
	if mode == "" {
		mode = ModeDefault
	}
	if err := m.p.SetMode(ctx, mode); err != nil {
		return "", errors.New("the plan was approved but the host chose an invalid mode: " + err.Error())
	}
	out := fmt.Sprintf("The plan was approved. The run is now in %s mode: from your next turn you are offered the tools it allows. Carry out the plan.", mode)
	if d.Reason != "" {
		out += " Note from the host: " + d.Reason
	}
	return out, nil
}
