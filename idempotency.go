package llmtoolkit

import (
	"context"
	"net/url"
	"strconv"
)

type runIDKey struct{}

// WithRunID returns a context saying that the calls made with it belong to
// the run id: a durable run, whose engine (agentloop.Executor) sets the
// run's identity here (its workflow ID), the same on every attempt of the
// run, so that [IdempotencyKey] is unique across runs.
func WithRunID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, runIDKey{}, id)
}

// RunIDFrom returns the run id set by [WithRunID], or "".
func RunIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(runIDKey{}).(string)
	return id
}

// IdempotencyKey returns the key a tool with side effects uses to do them
// once for call, the call its resolver received with ctx: the run
// ([RunIDFrom]), the agent ([AgentIDFrom]), the iteration
// ([IterationFrom]) and the call's [Call.ID], each escaped and joined with
// "/". Under a durable engine a call whose process died before its
// outcome was recorded runs again with the same key, so a tool that
// records the keys it has acted on (an email's Message-ID, a payment's
// idempotency header, a row's unique key) can skip the repeat. The call ID
// alone is not enough: it is distinct only among the calls of one answer,
// and the IDs a provider parser makes up (Gemini gives none) repeat from
// turn to turn and from run to run. Without a run id the key is unique
// within one run only. A handler that is not handed its call (an
// agentresolver.Func) finds it with [CallFrom]:
//
//	call, _ := llmtoolkit.CallFrom(ctx)
//	key := llmtoolkit.IdempotencyKey(ctx, call)
func IdempotencyKey(ctx context.Context, call Call) string {
	n, _ := IterationFrom(ctx)
	return url.PathEscape(RunIDFrom(ctx)) + "/" + url.PathEscape(AgentIDFrom(ctx)) + "/" +
		strconv.Itoa(n) + "/" + url.PathEscape(call.ID)
}
