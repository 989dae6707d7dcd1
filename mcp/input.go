package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrInputRequired is wrapped by the error of a tool that asks the client
// for input ([InputRequired]).
var ErrInputRequired = errors.New("the tool needs input from the client")

// ErrMissingClientCapability is wrapped by the error of a tool that needs a
// capability the client did not declare ([MissingClientCapability]).
var ErrMissingClientCapability = errors.New("the tool needs a client capability the client did not declare")

// ErrRequestState is wrapped by the error a server answers a retried call
// whose requestState it did not issue (forged or altered by the client).
var ErrRequestState = errors.New("mcp: the call's requestState fails its integrity check")

// InputRequiredError is the error of a tool that needs the client's user
// (an approval, a missing argument) to go on: build it with
// [InputRequired]. A tool served by [NewServer] ([Serve], [Handler])
// returns it, or an error wrapping it, and the client receives an
// input-required result (SEP-2322): it answers the requests (its user
// approves, the model samples) and calls the tool again with the
// responses, which the tool reads with [InputFrom]. A legacy client,
// whose protocol has no such result, is asked the same questions by the
// server over its session, and the tool called again with the answers; a
// legacy client served without a session ([WithStateless]) cannot be
// asked, and the call fails.
type InputRequiredError struct {
	// Requests are the questions, by an id the tool chooses: elicitation
	// (*sdk.ElicitParams), sampling (*sdk.CreateMessageParams) or roots
	// (*sdk.ListRootsParams).
	Requests sdk.InputRequestMap
	// State is what the tool needs to remember until the call comes back:
	// the client echoes it ([InputFrom] returns it). The server signs it,
	// so a client cannot alter it ([WithRequestStateKey]).
	State string

	// approval is the fingerprint of the call whose approval [Approval]
	// asks for, when it asks: the answer is bound to that call.
	approval string
}

// InputRequired returns an *[InputRequiredError] asking the client for
// requests, remembering state. With no requests it is the protocol's way
// of shedding load: the client calls again later, a bounded number of
// times.
func InputRequired(requests sdk.InputRequestMap, state string) error {
	return &InputRequiredError{Requests: requests, State: state}
}

// Error says what input the tool waits for.
func (e *InputRequiredError) Error() string {
	ids := make([]string, 0, len(e.Requests))
	for id := range e.Requests {
		ids = append(ids, id)
	}
	return fmt.Sprintf("the tool needs input from the client (%s)", strings.Join(ids, ", "))
}

// Unwrap returns [ErrInputRequired].
func (e *InputRequiredError) Unwrap() error { return ErrInputRequired }

// MissingClientCapabilityError is the error of a tool that cannot run
// without a capability the client did not declare: build it with
// [MissingClientCapability]. The client receives the protocol's
// MissingRequiredClientCapability error (-32021) naming it.
type MissingClientCapabilityError struct {
	// Required are the capabilities the tool needs.
	Required *sdk.ClientCapabilities
}

// MissingClientCapability returns a *[MissingClientCapabilityError]
// for required.
func MissingClientCapability(required *sdk.ClientCapabilities) error {
	return &MissingClientCapabilityError{Required: required}
}

// Error says that a capability is missing.
func (e *MissingClientCapabilityError) Error() string {
	return ErrMissingClientCapability.Error()
}

// Unwrap returns [ErrMissingClientCapability].
func (e *MissingClientCapabilityError) Unwrap() error { return ErrMissingClientCapability }

type callInputKey struct{}

// callInput is what a tools/call of NewServer's tells its tool.
type callInput struct {
	responses sdk.InputResponseMap
	state     string
	caps      *sdk.ClientCapabilities
	// asked is the fingerprint of the call whose approval the previous
	// round asked for ([Approval]), or "", and answer the client's answer
	// (kept out of responses: the tool reads its own).
	asked  string
	answer sdk.InputResponse

	mu sync.Mutex
	// approved are the fingerprints of the calls the client's user
	// approved, in an earlier round or in this one: carried on in the
	// signed state of any later round.
	approved []string
}

// InputFrom returns, in a tool served by [NewServer], the client's
// responses to the tool's previous [InputRequired] and the state it
// remembered, or nil and "" on a first call.
func InputFrom(ctx context.Context) (responses sdk.InputResponseMap, state string) {
	in, _ := ctx.Value(callInputKey{}).(*callInput)
	if in == nil {
		return nil, ""
	}
	return in.responses, in.state
}

// ClientCapabilitiesFrom returns, in a tool served by [NewServer], the
// capabilities the calling client declared (with the request on the
// current protocol, at initialize on a legacy one), or nil.
func ClientCapabilitiesFrom(ctx context.Context) *sdk.ClientCapabilities {
	in, _ := ctx.Value(callInputKey{}).(*callInput)
	if in == nil {
		return nil
	}
	return in.caps
}

// stateSigner signs and checks the requestState of input-required
// results, so that what a tool remembers comes back as it was.
type stateSigner struct{ key []byte }

func newStateSigner(key []byte) stateSigner {
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key) // crypto/rand.Read never fails
	}
	return stateSigner{key: key}
}

func (s stateSigner) mac(state string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(state))
	return m.Sum(nil)
}

// signedState is what the client carries between rounds, signed: the
// tool's own state and what [Approval] remembers.
type signedState struct {
	State    string   `json:"s,omitempty"`
	Asked    string   `json:"q,omitempty"` // the call whose approval is asked
	Approved []string `json:"a,omitempty"` // the calls approved
}

// sign returns the state with its MAC: "STATE.MAC", both base64url, the
// state a JSON signedState.
func (s stateSigner) sign(st signedState) string {
	data, _ := json.Marshal(st) // strings only: never fails
	enc := base64.RawURLEncoding
	return enc.EncodeToString(data) + "." + enc.EncodeToString(s.mac(string(data)))
}

// open returns the state signed into signed, or an error wrapping
// ErrRequestState.
func (s stateSigner) open(signed string) (signedState, error) {
	enc := base64.RawURLEncoding
	body, sum, ok := strings.Cut(signed, ".")
	data, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sum)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(string(data))) {
		return signedState{}, ErrRequestState
	}
	var st signedState
	if err := json.Unmarshal(data, &st); err != nil {
		return signedState{}, fmt.Errorf("%w: %w", ErrRequestState, err)
	}
	return st, nil
}

// withCallInput puts the input of req into ctx for the tool, after
// checking its requestState.
func (s stateSigner) withCallInput(ctx context.Context, req *sdk.CallToolRequest) (context.Context, error) {
	if req == nil || req.Params == nil {
		return ctx, nil
	}
	in := &callInput{responses: req.Params.InputResponses, caps: req.ClientCapabilities()}
	if req.Params.RequestState != "" {
		st, err := s.open(req.Params.RequestState)
		if err != nil {
			return ctx, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: ErrRequestState.Error()}
		}
		in.state, in.asked, in.approved = st.State, st.Asked, st.Approved
	}
	if answer, ok := in.responses[ApprovalRequestID]; ok {
		in.answer = answer
		in.responses = maps.Clone(in.responses)
		delete(in.responses, ApprovalRequestID)
		if len(in.responses) == 0 {
			in.responses = nil
		}
	}
	return context.WithValue(ctx, callInputKey{}, in), nil
}

// protocolAnswer turns a tool's error that is the protocol's business
// (input required, a missing capability) into the result or the JSON-RPC
// error the client must receive; ok is false for any other error.
func (s stateSigner) protocolAnswer(ctx context.Context, err error) (out *sdk.CallToolResult, perr error, ok bool) {
	if errors.Is(err, ErrRunAsTask) { // for the tasks middleware
		return nil, ErrRunAsTask, true
	}
	var ir *InputRequiredError
	if errors.As(err, &ir) {
		requests := ir.Requests
		if requests == nil {
			requests = sdk.InputRequestMap{} // none: the protocol's "busy, retry later"
		}
		st := signedState{State: ir.State, Asked: ir.approval}
		if in, _ := ctx.Value(callInputKey{}).(*callInput); in != nil {
			in.mu.Lock()
			st.Approved = slices.Clone(in.approved)
			in.mu.Unlock()
		}
		return &sdk.CallToolResult{InputRequests: requests, RequestState: s.sign(st)}, nil, true
	}
	var mc *MissingClientCapabilityError
	if errors.As(err, &mc) {
		data, merr := json.Marshal(sdk.MissingRequiredClientCapabilityData{RequiredCapabilities: mc.Required})
		if merr != nil {
			return nil, merr, true
		}
		return nil, &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities, Message: mc.Error(), Data: data}, true
	}
	return nil, nil, false
}
