package dbos

import (
	"context"
	"errors"
	"fmt"
	"sync"

	transact "github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// ErrEngine is wrapped by the errors of DBOS itself (the system database
// cannot be reached, a recorded step does not match the run's code, the run
// lost its ownership to another process): the step did not fail, the engine
// did.
var ErrEngine = errors.New("durable/dbos: the DBOS engine failed")

// executor is the [agentloop.Executor] of one workflow execution: it runs
// each model call and each tool call as a DBOS step of the workflow wf.
//
// Step IDs: DBOS numbers a workflow's steps with a counter that the
// workflow's goroutine advances each time it starts a step (RunAsStep,
// Go, Recv, SetEvent). The loop calls Model and Tools from that goroutine,
// in a deterministic order, and Tools starts a turn's steps with
// transact.Go in call order, so the counter gives each call the same ID in
// every attempt even though the calls then run concurrently (DBOS runs a
// Go step in its own goroutine; the counter is not touched there). Each
// step is also named after what it does (model/ITERATION,
// tool/ITERATION/INDEX/CALLID): DBOS checks the recorded name against the
// replayed one, so a run whose code changed is stopped with
// transact.ErrStepNondeterminism instead of reading another step's outcome.
type executor struct {
	wf  transact.Context
	eng *Engine
}

var _ agentloop.Executor = (*executor)(nil)

// Model runs the model call as the step model/ITERATION, and a compaction
// (agentloop.ContextPolicy.Summarize) as the step compact/ITERATION. Its
// outcome (the answer or the summary, or the error by kind) is recorded;
// a resumed run reads it back instead of calling the model or the
// summarizer again, so the compacted history it goes on with is the one
// the first attempt had.
func (x *executor) Model(ctx context.Context, step agentloop.ModelStep, call func(context.Context) (agentloop.Response, error)) (agentloop.Response, error) {
	name := fmt.Sprintf("model/%d", step.Iteration)
	if step.Compaction {
		name = fmt.Sprintf("compact/%d", step.Iteration)
	}
	out, err := transact.RunAsStep(x.wf, func(context.Context) (agentloop.ModelOutcome, error) {
		return agentloop.EncodeModel(call(ctx)), nil
	}, transact.WithStepName(name))
	if err != nil {
		return agentloop.Response{}, fmt.Errorf("%w: step %s: %w", ErrEngine, name, err)
	}
	return out.Unpack()
}

// toolStep is the recorded outcome of one tool call's step: its result, or
// the approval it waits for (the call did not run).
type toolStep struct {
	Outcome agentloop.ToolOutcome `json:"outcome"`
	// Approval is set when the call asked a person (AskPerson) and has no
	// answer yet: the tool did not run, Outcome is not its result.
	Approval *Approval `json:"approval,omitempty"`
}

// Tools runs each call of the turn as the step tool/ITERATION/INDEX/CALLID,
// up to step.MaxParallel at once. A call that waits for a person's approval
// (see [AskPerson]) is then, in call order: announced ([Engine.Pending]),
// answered with DBOS Recv on the topic of its call ID (see
// [Engine.Approve]) and run again, with the answer, as the step
// tool/ITERATION/INDEX/CALLID/approved.
func (x *executor) Tools(ctx context.Context, step agentloop.ToolsStep, run func(ctx context.Context, i int) llmtoolkit.Result) ([]llmtoolkit.Result, error) {
	n := len(step.Calls)
	limit := step.MaxParallel
	if limit < 1 {
		limit = 1
	}
	sem := make(chan struct{}, limit)
	chans := make([]<-chan transact.StepOutcome[toolStep], n)
	for i, call := range step.Calls {
		name := fmt.Sprintf("tool/%d/%d/%s", step.Iteration, i, call.ID)
		ch, err := transact.Go(x.wf, func(context.Context) (toolStep, error) {
			sem <- struct{}{}
			defer func() { <-sem }()
			return x.runCall(ctx, run, i, call, nil), nil
		}, transact.WithStepName(name))
		if err != nil {
			drain(chans[:i])
			return nil, fmt.Errorf("%w: step %s: %w", ErrEngine, name, err)
		}
		chans[i] = ch
	}
	steps := make([]toolStep, n)
	var errs []error
	for i, ch := range chans {
		o := <-ch
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%w: step tool/%d/%d/%s: %w", ErrEngine, step.Iteration, i, step.Calls[i].ID, o.Err))
			continue
		}
		steps[i] = o.Result
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	results := make([]llmtoolkit.Result, n)
	for i, s := range steps {
		if s.Approval != nil {
			var err error
			if s, err = x.approve(ctx, step, run, i, *s.Approval); err != nil {
				return nil, err
			}
		}
		results[i] = s.Outcome.Result()
	}
	return results, nil
}

// runCall runs call i in-process, with the approval slot AskPerson reads.
// decision is the person's answer for a call run again after its approval.
func (x *executor) runCall(ctx context.Context, run func(context.Context, int) llmtoolkit.Result, i int, call llmtoolkit.Call, decision *agent.Decision) toolStep {
	slot := &approvalSlot{callID: call.ID, decision: decision}
	res := run(context.WithValue(ctx, approvalKey{}, slot), i)
	if a := slot.asked(); a != nil && decision == nil {
		return toolStep{Approval: a}
	}
	return toolStep{Outcome: agentloop.EncodeResult(res)}
}

// approve waits durably for the answer to call i's approval and runs the
// call again with it.
func (x *executor) approve(ctx context.Context, step agentloop.ToolsStep, run func(context.Context, int) llmtoolkit.Result, i int, a Approval) (toolStep, error) {
	call := step.Calls[i]
	if err := transact.SetEvent(x.wf, pendingEvent, a); err != nil {
		return toolStep{}, fmt.Errorf("%w: announcing the approval of call %s: %w", ErrEngine, call.ID, err)
	}
	d, err := transact.Recv[agent.Decision](x.wf, approvalTopic(call.ID), x.eng.cfg.ApprovalTimeout)
	switch {
	case errors.Is(err, transact.ErrTimeout):
		d = agent.Decision{Deny: true, Message: fmt.Sprintf("no one answered the approval of this call within %v", x.eng.cfg.ApprovalTimeout)}
	case err != nil:
		return toolStep{}, fmt.Errorf("%w: waiting for the approval of call %s: %w", ErrEngine, call.ID, err)
	}
	if err := transact.SetEvent(x.wf, pendingEvent, Approval{}); err != nil {
		return toolStep{}, fmt.Errorf("%w: clearing the approval of call %s: %w", ErrEngine, call.ID, err)
	}
	name := fmt.Sprintf("tool/%d/%d/%s/approved", step.Iteration, i, call.ID)
	s, err := transact.RunAsStep(x.wf, func(context.Context) (toolStep, error) {
		return x.runCall(ctx, run, i, call, &d), nil
	}, transact.WithStepName(name))
	if err != nil {
		return toolStep{}, fmt.Errorf("%w: step %s: %w", ErrEngine, name, err)
	}
	return s, nil
}

// drain waits for the steps already started, so that none outlives Tools.
func drain[T any](chans []<-chan transact.StepOutcome[T]) {
	var wg sync.WaitGroup
	for _, ch := range chans {
		wg.Go(func() { <-ch })
	}
	wg.Wait()
}
