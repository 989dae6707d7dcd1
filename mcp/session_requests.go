//lint:file-ignore SA1019 MCP deprecates logging and sampling (SEP-2577) but still serves them during the deprecation window: these functions are for its legacy clients

package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNoSession is returned by [Elicit] and [CreateMessage] for a tool call
// served by [NewServer] that has no session with its client on which the
// server may send a request of its own: a request of the current protocol
// ([CurrentProtocolVersion], stateless: the protocol forbids such
// requests), or a legacy one served without a session ([WithStateless]).
// On the current protocol a tool asks the client through [InputRequired]
// instead (and reads the answer with [InputFrom]).
var ErrNoSession = errors.New("mcp: the call has no session with its client to send a request on: ask through InputRequired")

// DefaultSessionRequestTimeout bounds [Elicit] and [CreateMessage] when
// the call's ctx has no deadline of its own: a client (or its user) that
// never answers fails the request after it.
const DefaultSessionRequestTimeout = 5 * time.Minute

type sessionKey struct{}

// withSession gives the tool called on ctx the session of its request.
func withSession(ctx context.Context, req *sdk.CallToolRequest) context.Context {
	if req == nil || req.Session == nil {
		return ctx
	}
	return context.WithValue(ctx, sessionKey{}, req.Session)
}

// Log sends the calling client an MCP log message (notifications/message)
// from a tool served by [NewServer] ([Serve], [Handler]), while the call
// runs: level is the message's severity, logger names its source (may be
// empty), data is any JSON-encodable value (a string, a map).
//
// The client chooses what it receives: on a legacy session, the level it
// set with logging/setLevel (none set: nothing is sent); served without a
// session ([WithStateless]), info and above; on the current protocol, the
// level it put in the request's _meta (none: nothing is sent). A message
// below that level is not sent, and Log returns nil: the client asked not
// to see it. Log returns [ErrNotServed] when ctx is not
// that of a tool call served over MCP, and ctx's error once it is done.
//
// MCP logging is deprecated by the 2026-07-28 protocol (SEP-2577); it
// still works during the deprecation window.
func Log(ctx context.Context, level sdk.LoggingLevel, logger string, data any) (err error) {
	ss, _ := ctx.Value(sessionKey{}).(*sdk.ServerSession)
	if ss == nil {
		return ErrNotServed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	defer recoverInto(&err, "log")
	if err := ss.Log(ctx, &sdk.LoggingMessageParams{Level: level, Logger: logger, Data: data}); err != nil {
		return fmt.Errorf("mcp: log message not sent: %w", err)
	}
	return nil
}

// Elicit asks the calling client's user for input (elicitation/create),
// from a tool served by [NewServer] to a legacy client over its session,
// and returns the answer: its Action is "accept" (with Content), "decline"
// or "cancel".
//
// It returns [ErrNotServed] when ctx is not that of a tool call served
// over MCP; [ErrNoSession] when the call has no session to ask on (the
// current protocol, or [WithStateless]): ask through [InputRequired]
// then; a *[MissingClientCapabilityError] when the client did not declare
// elicitation (returned by the tool, the client receives the protocol's
// error naming it). It waits at most until ctx is done, or
// [DefaultSessionRequestTimeout] when ctx has no deadline.
func Elicit(ctx context.Context, params *sdk.ElicitParams) (res *sdk.ElicitResult, err error) {
	ss, err := requestSession(ctx)
	if err != nil {
		return nil, err
	}
	if caps := ss.InitializeParams().Capabilities; caps.Elicitation == nil {
		return nil, MissingClientCapability(&sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{}})
	}
	if params == nil {
		return nil, errors.New("mcp: Elicit: params are nil")
	}
	ctx, cancel := boundSessionRequest(ctx)
	defer cancel()
	defer recoverInto(&err, "elicitation")
	res, err = ss.Elicit(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("mcp: elicitation: %w", err)
	}
	return res, nil
}

// CreateMessage asks the calling client for an LLM completion
// (sampling/createMessage), from a tool served by [NewServer] to a legacy
// client over its session, and returns it.
//
// Its errors are those of [Elicit], for the sampling capability. Sampling
// is deprecated by the 2026-07-28 protocol (SEP-2577); it still works
// during the deprecation window.
func CreateMessage(ctx context.Context, params *sdk.CreateMessageParams) (res *sdk.CreateMessageResult, err error) {
	ss, err := requestSession(ctx)
	if err != nil {
		return nil, err
	}
	if caps := ss.InitializeParams().Capabilities; caps.Sampling == nil {
		return nil, MissingClientCapability(&sdk.ClientCapabilities{Sampling: &sdk.SamplingCapabilities{}})
	}
	if params == nil {
		return nil, errors.New("mcp: CreateMessage: params are nil")
	}
	ctx, cancel := boundSessionRequest(ctx)
	defer cancel()
	defer recoverInto(&err, "sampling")
	res, err = ss.CreateMessage(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("mcp: sampling: %w", err)
	}
	return res, nil
}

// requestSession is the session of the tool call on ctx when the server
// may send the client a request on it: a legacy session opened by
// initialize (a stateless legacy request has initialize parameters the
// SDK made up, without capabilities).
func requestSession(ctx context.Context) (*sdk.ServerSession, error) {
	ss, _ := ctx.Value(sessionKey{}).(*sdk.ServerSession)
	if ss == nil {
		return nil, ErrNotServed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.ProtocolVersion >= CurrentProtocolVersion || ip.Capabilities == nil {
		return nil, ErrNoSession
	}
	return ss, nil
}

// boundSessionRequest gives ctx a deadline when it has none.
func boundSessionRequest(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultSessionRequestTimeout)
}

// recoverInto turns a panic of the SDK, while sending what, into *err.
func recoverInto(err *error, what string) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("mcp: sending the client a %s panicked: %v", what, p)
	}
}
