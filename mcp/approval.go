package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNotServed is returned by [Approval] for a call that is not a tool
// call served by [NewServer] ([Serve], [Handler]): there is no MCP client
// to ask.
var ErrNotServed = errors.New("mcp: the call is not served over MCP: there is no client to ask")

// ApprovalRequestID is the id, in the input-required result, of the
// elicitation [Approval] sends.
const ApprovalRequestID = "io.llmtoolkit/approval"

// maxApprovalArgumentBytes caps the arguments quoted in an approval's
// message (see approvalMessage: longer ones are shown value by value, cut
// and marked).
const maxApprovalArgumentBytes = 2048

// Approval asks the MCP client's user whether call may run, through the
// protocol, and returns the answer. It is meant for the host's approval
// callback of a guarded resolver served over MCP (agent's CanUseTool),
// where it turns "ask the user" into an input-required result (SEP-2322):
//
//   - On the call's first round it returns an *[InputRequiredError]
//     asking the client for an elicitation ([ApprovalRequestID]) whose
//     message names the tool and quotes its arguments (past 2 KiB, every
//     argument is still shown, its long values cut and marked, and the
//     message says so, with the arguments' size and SHA-256). The callback must
//     fail the call with that error, without running it (agent.Pending);
//     the client's user answers and the client calls again.
//   - On the call that comes back with the answer, it returns true when
//     the user accepted the elicitation, false (and nil) when they
//     declined or cancelled it: refuse the call then.
//   - It returns [ErrNotServed] when ctx is not that of a tool call
//     served by [NewServer]: decide otherwise (or refuse).
//   - It returns a *[MissingClientCapabilityError] when the client did not
//     declare elicitation: passed on like the question (agent.Pending),
//     the client receives the protocol's error naming the capability.
//
// The answer is bound to the call it was asked for: the signed
// requestState names the call (its tool and a hash of its arguments), so
// an approval given for one call does not approve another call of the
// same tool with other arguments (that one is asked again), and a client
// cannot alter the state ([ErrRequestState]). Nothing is kept by the
// server between rounds, so this works on the stateless path and across
// replicas sharing a [WithRequestStateKey]. An approved call that then
// asks for input itself ([InputRequired]) keeps its approval across those
// rounds, and reads its own state and answers with [InputFrom], never
// the approval's. A legacy client is asked over its session, as for any
// input-required result; a legacy client served without a session
// ([WithStateless]) cannot be asked, and the call fails.
//
// Approvals of the calls made inside a served call (a sub-agent's) are
// asked like any other, but their error reaches the sub-agent's model,
// not the client: approve those with the host's own rules.
func Approval(ctx context.Context, call llmtoolkit.Call) (approved bool, err error) {
	in, _ := ctx.Value(callInputKey{}).(*callInput)
	if in == nil {
		return false, ErrNotServed
	}
	fp := fingerprint(call)
	in.mu.Lock()
	defer in.mu.Unlock()
	if slices.Contains(in.approved, fp) {
		return true, nil
	}
	if in.asked == fp {
		if r, ok := in.answer.(*sdk.ElicitResult); ok && r != nil {
			if r.Action != "accept" {
				return false, nil
			}
			in.approved = append(in.approved, fp)
			return true, nil
		}
	}
	if in.caps != nil && in.caps.Elicitation == nil {
		// A client that cannot be asked: the protocol's error naming
		// what it lacks, not a question it cannot answer.
		return false, MissingClientCapability(&sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{}})
	}
	return false, &InputRequiredError{
		Requests: sdk.InputRequestMap{ApprovalRequestID: &sdk.ElicitParams{
			Message:         approvalMessage(call),
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		}},
		State:    in.state, // the tool's own, kept for when it runs
		approval: fp,
	}
}

// fingerprint names call for its approval: its tool and a hash of its
// arguments (encoded with sorted keys).
func fingerprint(call llmtoolkit.Call) string {
	args, _ := json.Marshal(call.Arguments) // a parsed call's arguments always encode
	sum := sha256.Sum256(append(append([]byte(call.Name), 0), args...))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// approvalMessage is what the client's user reads: the tool and its
// arguments as JSON. Arguments longer than maxApprovalArgumentBytes are
// not cut at the end (an argument after a long one would not be seen):
// their longest string values are cut one by one, each ending in
// truncatedMark, so every argument is shown, and the message says so and
// gives their size in all and their SHA-256. When even that does not fit
// (too many values), it names the arguments and says they are not shown.
func approvalMessage(call llmtoolkit.Call) string {
	args, _ := json.Marshal(call.Arguments)
	const ask = "Accept to allow it, decline to refuse it."
	if len(args) <= maxApprovalArgumentBytes {
		return fmt.Sprintf("Allow the tool %q to run with the arguments %s? %s", call.Name, args, ask)
	}
	sum := sha256.Sum256(args)
	shown := ""
	var generic any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if dec.Decode(&generic) == nil {
		if cut := cutStrings(generic, len(args), maxApprovalArgumentBytes); cut != nil {
			if data, err := json.Marshal(cut); err == nil && len(data) <= maxApprovalArgumentBytes {
				shown = fmt.Sprintf("each long value cut, ending in %q: %s", truncatedMark, data)
			}
		}
	}
	if shown == "" {
		names := slices.Sorted(maps.Keys(call.Arguments))
		shown = "too many to show; their names: " + textutil.CutUTF8(strings.Join(names, ", "), maxApprovalArgumentBytes) + " " + truncatedMark
	}
	return fmt.Sprintf("Allow the tool %q to run with these arguments? They are %s in all (SHA-256 %x) and not shown whole: %s. %s",
		call.Name, textutil.HumanSize(int64(len(args))), sum, shown, ask)
}
