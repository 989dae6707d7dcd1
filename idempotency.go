package llmtoolkit

import (
	"context"
	"net/url"
	"strconv"
)

// IdempotencyKey returns the key a tool with side effects uses to do them
// once for call, the call its resolver received with ctx: the run, the
// agent and the iteration of ctx's [Scope], and the call's [Call.ID], each escaped and joined with
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
	s := ScopeFrom(ctx)
	return url.PathEscape(s.RunID) + "/" + url.PathEscape(s.AgentID) + "/" +
		strconv.Itoa(s.Iteration) + "/" + url.PathEscape(call.ID)
}
