// Package calltask carries on a call's context what its server knows of
// tasks (package mcp's tasks extension): that the call may go on as a
// task of its own (its client runs tasks), or that it runs in one. A tool
// of this module that would keep work in the background (codetools' bash
// with run_in_background, exec_command without a terminal) hands it to
// the task instead: the task is the
// background, its client polls and cancels it. It also carries the end of
// the run a call belongs to when that run is a sub-agent's
// ([WithLifetime]): the background work its calls start (codetools' jobs
// and terminals) ends with it, since nobody else may reach it. And it
// carries where such work reports what happens after the call returned
// ([WithLater]: a job's end, for the audit trail).
package calltask

import (
	"context"
	"errors"
)

// ErrRunAsTask is returned by a tool whose call may go on as a task
// ([Offered]) to do so: the server answers with a task and calls the tool
// again, in it ([In]). mcp.ErrRunAsTask is this error.
var ErrRunAsTask = errors.New("mcp: the tool goes on as a task")

type offerKey struct{}
type inKey struct{}

// WithOffer marks ctx: the call may go on as a task by returning
// ErrRunAsTask.
func WithOffer(ctx context.Context) context.Context {
	return context.WithValue(ctx, offerKey{}, true)
}

// Offered reports whether the call may go on as a task.
func Offered(ctx context.Context) bool {
	ok, _ := ctx.Value(offerKey{}).(bool)
	return ok
}

// WithTask marks ctx: the call runs in a task, which its client follows
// and cancels (by cancelling the call's context).
func WithTask(ctx context.Context) context.Context {
	return context.WithValue(ctx, inKey{}, true)
}

// In reports whether the call runs in a task.
func In(ctx context.Context) bool {
	ok, _ := ctx.Value(inKey{}).(bool)
	return ok
}

type lifetimeKey struct{}

// WithLifetime marks ctx with the end of the run its calls belong to (a
// sub-agent's, set by agent's spawn_agent): background work a call starts
// ends when done is closed.
func WithLifetime(ctx context.Context, done <-chan struct{}) context.Context {
	return context.WithValue(ctx, lifetimeKey{}, done)
}

// Lifetime returns the end of the call's run set by [WithLifetime]; nil
// when none was set (the work lives as long as its session).
func Lifetime(ctx context.Context) <-chan struct{} {
	done, _ := ctx.Value(lifetimeKey{}).(<-chan struct{})
	return done
}

// An Event is what a call's background work reports once the call has
// returned: a job's end.
type Event struct {
	// Kind names the event: "job_end".
	Kind string
	// JobID is the job's id.
	JobID int
	// Content says what happened (the job's state and its last output).
	Content string
	// IsError marks an end other than exit code 0.
	IsError bool
}

type laterKey struct{}

// WithLater marks ctx with where its call's background work reports
// what happens after the call returned (set by trace's Recorder: a row
// of its own, attributed to the call; and by checkpoint's Resolver: the
// end of a job its checkpoints name). It adds report to those ctx had:
// each is told, this one first, so that wrappers stacked in any order
// all hear of the event.
func WithLater(ctx context.Context, report func(Event)) context.Context {
	if prev := Later(ctx); prev != nil {
		mine := report
		report = func(e Event) { mine(e); prev(e) }
	}
	return context.WithValue(ctx, laterKey{}, report)
}

// Later returns the reports set by [WithLater], as one; nil when none
// was set.
func Later(ctx context.Context) func(Event) {
	report, _ := ctx.Value(laterKey{}).(func(Event))
	return report
}
