package dbos

import (
	"context"
	"fmt"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
)

// Approval is a tool call waiting for a person's answer: what
// [Engine.Pending] reports and what [Engine.Approve] answers.
type Approval struct {
	// CallID is the call's ID: pass it to [Engine.Approve].
	CallID string `json:"call_id,omitempty"`
	// Tool is the name of the tool called.
	Tool string `json:"tool,omitempty"`
	// Arguments are the call's arguments.
	Arguments map[string]any `json:"arguments,omitempty"`
}

// pendingEvent is the DBOS event key under which a run publishes the
// approval it waits for (an empty Approval once answered).
const pendingEvent = "llmtoolkit.approval"

// approvalTopic is the DBOS message topic that answers the approval of
// the call callID.
func approvalTopic(callID string) string { return "llmtoolkit.approval/" + callID }

type approvalKey struct{}

// approvalSlot is how AskPerson, inside a tool call's step, talks to the
// executor: it reads the person's answer, or asks for one.
type approvalSlot struct {
	callID   string          // the call of the step
	decision *agent.Decision // the answer, when the call runs again after it

	mu  sync.Mutex
	ask *Approval
}

func (s *approvalSlot) asked() *Approval {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ask
}

// AskPerson is an [agent.CanUseTool] that has a person decide the call,
// durably: under an [Engine], the call's step ends without running the
// tool, the run publishes the call ([Engine.Pending]) and waits with DBOS
// Recv (Config.ApprovalTimeout, a week by default) for [Engine.Approve];
// then the call runs again, as its own step, and AskPerson returns the
// answer. The run can wait for hours and survive restarts meanwhile. The
// permission checks before the callback (mode, rules, PreToolUse hooks)
// run again with the call: keep them free of side effects.
//
// Use it as agent.Config.CanUseTool, or call it from a CanUseTool of your
// own for the calls a person must see. Outside an Engine's run it denies
// the call, saying why; so it does for a call made inside another call's
// step (a sub-agent's calls run inside its spawn_agent call's step, which
// cannot wait for one of them and run it again alone).
func AskPerson(ctx context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
	slot, ok := ctx.Value(approvalKey{}).(*approvalSlot)
	if !ok {
		return agent.Deny("durable/dbos.AskPerson: this call does not run under a durable/dbos Engine, so no one can be asked; run the agent with Engine.Start or use another CanUseTool")
	}
	if call.ID != slot.callID {
		// A call made inside the step's call (a sub-agent's): its step is
		// its parent's, which cannot wait for it and run it again alone.
		return agent.Deny(fmt.Sprintf("durable/dbos.AskPerson: call %q runs inside call %q (a sub-agent's call, say), which is the durable step; a person can only approve the step's own call: approve the sub-agent's spawn instead, or decide this call without AskPerson", call.ID, slot.callID))
	}
	if slot.decision != nil {
		return *slot.decision
	}
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.ask == nil {
		slot.ask = &Approval{CallID: call.ID, Tool: call.Name, Arguments: call.Arguments}
	}
	return agent.Deny("waiting for a person's approval") // not recorded: the executor waits for the answer
}
