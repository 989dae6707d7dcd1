package mcp

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit"
)

// DefaultTaskOwnerShare is the part of a [MemoryTaskStore]'s caps one
// owner may hold: a quarter of its tasks and of its bytes. The owner is
// the caller's tenant under [WithBearerAuth], else the MCP session that
// created the task; the tasks of callers with neither (the current
// protocol without auth) are one owner's, who may use the whole store.
const DefaultTaskOwnerShare = 4

// DefaultTaskGrace is how long a [MemoryTaskStore] keeps a finished task
// from being forgotten to make room for another owner's: time for its
// owner to read its result.
const DefaultTaskGrace = 5 * time.Minute

// ownerKey names the share t counts in.
func ownerKey(t *Task) string {
	switch {
	case t.Owner != nil && t.Owner.Tenant != "":
		return "tenant\x00" + t.Owner.Tenant
	case t.Session != "":
		return "session\x00" + t.Session
	}
	return ""
}

// share is one owner's use of a MemoryTaskStore.
type share struct {
	tasks int
	bytes int64
}

// ownerCaps are the most owner may hold: a share of the caps, or the
// whole store for the tasks of no known owner (without auth and outside a
// session every caller is that one owner: there is no one to share with).
func (s *MemoryTaskStore) ownerCaps(owner string) (int, int64) {
	if owner == "" {
		return s.max, s.maxBytes
	}
	return max(s.max/DefaultTaskOwnerShare, 1), max(s.maxBytes/DefaultTaskOwnerShare, 1)
}

// evictableLocked reports whether the task id may be forgotten to make
// room for a task of owner: a finished task of the same owner always, a
// finished task of another owner once its grace has passed.
func (s *MemoryTaskStore) evictableLocked(id, owner string, now time.Time) bool {
	t := s.tasks[id]
	if t == nil || !t.Status.Terminal() {
		return false
	}
	return ownerKey(t) == owner || now.Sub(t.UpdatedAt) >= s.grace
}

// account adds n tasks and b bytes to the share of t's owner.
func (s *MemoryTaskStore) account(t *Task, n int, b int64) {
	key := ownerKey(t)
	sh := s.shares[key]
	sh.tasks += n
	sh.bytes += b
	if sh.tasks <= 0 {
		delete(s.shares, key)
		return
	}
	s.shares[key] = sh
}

// validate checks the arguments of the call ctr would make a task of
// against the tool's schema, before anything is stored: a call with bad
// arguments is answered at once with the error result Execute would give,
// and no task is created.
func (ts *taskServer) validate(ctx context.Context, ctr *sdk.CallToolRequest) (*sdk.CallToolResult, bool) {
	r := callerResolver(ctx, ts.r)
	if r == nil {
		return nil, false
	}
	tool, ok := llmtoolkit.FindTool(r, ctr.Params.Name)
	if !ok {
		return nil, false // the run answers it as an unknown tool
	}
	call, err := llmtoolkit.ParseCall("", ctr.Params.Name, string(ctr.Params.Arguments))
	if err == nil {
		_, err = llmtoolkit.ValidateCall(ctx, tool, call)
	}
	if err != nil {
		return textResult(err.Error(), true), true
	}
	return nil, false
}
