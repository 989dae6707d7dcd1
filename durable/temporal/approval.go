package temporal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// Approval is a person's decision on one tool call of a run, sent to the
// run with [Approve] (the [ApprovalSignal] signal).
type Approval struct {
	// CallID is the ID of the call decided ([PendingApproval].Call.ID).
	CallID string `json:"call_id"`
	// Approved lets the call run; false refuses it: the call does not run
	// and the model reads a permission-denied result (wrapping
	// llmtoolkit.ErrDenied) with Reason.
	Approved bool `json:"approved"`
	// Reason says why, for the model, when the call is refused.
	Reason string `json:"reason,omitempty"`
	// By names who decided, for the record (it is in the run's history).
	By string `json:"by,omitempty"`
}

// PendingApproval is a tool call a run waits to have approved.
type PendingApproval struct {
	// Iteration is the 1-based iteration of the call's turn.
	Iteration int `json:"iteration"`
	// Index is the call's position in its turn.
	Index int `json:"index"`
	// Call is the call: its ID is what [Approval].CallID names.
	Call llmtoolkit.Call `json:"call"`
}

// Approve sends a person's decision to the run workflowID (runID "" means
// its latest run). The run records it in its history, so it holds however
// long the run waited and across worker restarts. A decision for a call the
// run does not wait for is logged by the workflow and otherwise ignored.
func Approve(ctx context.Context, c client.Client, workflowID, runID string, a Approval) error {
	if c == nil {
		return errors.New("temporal.Approve: the client is nil; pass the client.Client of the run's namespace")
	}
	if a.CallID == "" {
		return errors.New("temporal.Approve: Approval.CallID is empty; set it to the ID of a call that Pending lists")
	}
	if err := c.SignalWorkflow(ctx, workflowID, runID, ApprovalSignal, a); err != nil {
		return fmt.Errorf("temporal.Approve: signalling run %q: %w", workflowID, err)
	}
	return nil
}

// Pending returns the calls the run workflowID (runID "" means its latest
// run) waits to have approved, in call order; none when it waits for none.
func Pending(ctx context.Context, c client.Client, workflowID, runID string) ([]PendingApproval, error) {
	if c == nil {
		return nil, errors.New("temporal.Pending: the client is nil; pass the client.Client of the run's namespace")
	}
	v, err := c.QueryWorkflow(ctx, workflowID, runID, PendingApprovalsQuery)
	if err != nil {
		return nil, fmt.Errorf("temporal.Pending: querying run %q: %w", workflowID, err)
	}
	var p []PendingApproval
	if err := v.Get(&p); err != nil {
		return nil, fmt.Errorf("temporal.Pending: decoding the answer of run %q: %w", workflowID, err)
	}
	return p, nil
}

// approvals is the workflow's side of the approvals: the signals received
// and the calls waiting. It lives in workflow code: no goroutines, no
// clock, only the workflow's channel, selector and timer.
type approvals struct {
	need    func(name string) bool // nil: no call needs approval
	timeout time.Duration
	ch      workflow.ReceiveChannel
	decided map[string]Approval
	pending []PendingApproval
}

func newApprovals(ctx workflow.Context, in RunInput) *approvals {
	a := &approvals{timeout: in.ApprovalTimeout, ch: workflow.GetSignalChannel(ctx, ApprovalSignal), decided: map[string]Approval{}}
	if len(in.Approve) > 0 {
		names := slices.Clone(in.Approve)
		a.need = func(name string) bool { return slices.Contains(names, "*") || slices.Contains(names, name) }
	}
	return a
}

// await returns the decision on each of calls[:n] that needs one (by call
// index), waiting for the signals of those not decided yet. When the
// run's ApprovalTimeout passes first, the calls still undecided are
// refused. It returns ctx's error when the run is cancelled while it waits.
func (a *approvals) await(ctx workflow.Context, iteration int, calls []llmtoolkit.Call, n int) (map[int]Approval, error) {
	if a.need == nil {
		return nil, nil
	}
	var waiting []PendingApproval
	for i, c := range calls[:n] {
		if a.need(c.Name) {
			waiting = append(waiting, PendingApproval{Iteration: iteration, Index: i, Call: c})
		}
	}
	if len(waiting) == 0 {
		return nil, nil
	}
	a.pending = waiting
	defer func() { a.pending = nil }()
	undecided := func() int {
		k := 0
		for _, p := range waiting {
			if _, ok := a.decided[p.Call.ID]; !ok {
				k++
			}
		}
		return k
	}
	timedOut := false
	var timer workflow.Future
	tctx, cancelTimer := workflow.WithCancel(ctx)
	defer cancelTimer()
	if a.timeout > 0 {
		timer = workflow.NewTimer(tctx, a.timeout)
	}
	for undecided() > 0 && !timedOut {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(a.ch, func(c workflow.ReceiveChannel, _ bool) {
			var ap Approval
			c.Receive(ctx, &ap)
			if !slices.ContainsFunc(waiting, func(p PendingApproval) bool { return p.Call.ID == ap.CallID }) {
				workflow.GetLogger(ctx).Warn("llmtoolkit: an approval names a call this run does not wait for; ignored",
					"call_id", ap.CallID, "iteration", iteration)
				return
			}
			a.decided[ap.CallID] = ap
		})
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		if timer != nil {
			sel.AddFuture(timer, func(workflow.Future) { timedOut = true })
		}
		sel.Select(ctx)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	out := make(map[int]Approval, len(waiting))
	for _, p := range waiting {
		ap, ok := a.decided[p.Call.ID]
		if !ok {
			ap = Approval{CallID: p.Call.ID, Reason: fmt.Sprintf("no one approved the call within %s (RunInput.ApprovalTimeout)", a.timeout)}
		}
		out[p.Index] = ap
	}
	return out, nil
}

// deniedResult is the result of a call a person refused.
func deniedResult(call llmtoolkit.Call, ap Approval) llmtoolkit.Result {
	reason := ap.Reason
	if reason == "" {
		reason = "a person refused it"
		if ap.By != "" {
			reason = ap.By + " refused it"
		}
	}
	err := llmtoolkit.Deny(call.Name, reason)
	return llmtoolkit.Result{ToolCallID: call.ID, Name: call.Name, Content: err.Error(), IsError: true, Err: err}
}
