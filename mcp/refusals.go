package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit"
)

// ErrToolNotAllowed is the error of the refused row a [trace.Recorder]
// records for a call its caller's [ToolPolicy] does not allow.
var ErrToolNotAllowed = errors.New("mcp: the tool is not available to this caller")

// ErrRateLimited is the error of the refused row a [trace.Recorder]
// records for a call over one of the [WithRateLimits] limits.
var ErrRateLimited = errors.New("mcp: the call is over its rate limit")

// codeUnauthorized is the JSON-RPC error code of the body of a request
// the bearer authorization refused (a server-defined code).
const codeUnauthorized = -32001

// refuseRequest answers an HTTP request the bearer authorization
// refused: the status, the challenge (whose error_description says why,
// RFC 6750 §3), and a JSON-RPC error whose message says it too (the
// official SDK's client reports such a body's message; it reads no
// challenge). It logs the refusal as a warning: the status, the reason,
// the remote address, never the token.
func refuseRequest(w http.ResponseWriter, req *http.Request, log *slog.Logger, status int, challenge, reason string) {
	log.WarnContext(req.Context(), "mcp: request refused by the bearer authorization",
		slog.Int("status", status), slog.String("reason", reason), slog.String("challenge_error", challengeError(challenge)),
		slog.String("remote", req.RemoteAddr), slog.String("method", req.Method))
	if challenge != "" {
		w.Header().Set("WWW-Authenticate", challenge)
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": refusedRequestID(req),
		"error": map[string]any{"code": codeUnauthorized, "message": fmt.Sprintf("%s: %s", strings.ToLower(http.StatusText(status)), reason)}})
	if err != nil {
		http.Error(w, reason, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// refusedRequestID is the JSON-RPC id of a refused POST, read from at
// most maxRefusedBodyBytes of its body, or null: the answer carries it so
// that a client matches the error to its request.
func refusedRequestID(req *http.Request) json.RawMessage {
	null := json.RawMessage("null")
	if req.Method != http.MethodPost || req.Body == nil {
		return null
	}
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.NewDecoder(io.LimitReader(req.Body, maxRefusedBodyBytes)).Decode(&msg) != nil || len(msg.ID) == 0 || len(msg.ID) > maxIDLength {
		return null
	}
	if c := msg.ID[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return null
	}
	return msg.ID
}

// maxRefusedBodyBytes bounds what is read of a refused request's body.
const maxRefusedBodyBytes = 64 << 10

// challengeError is the error code of a WWW-Authenticate challenge, or "".
func challengeError(challenge string) string {
	_, rest, ok := strings.Cut(challenge, `error="`)
	if !ok {
		return ""
	}
	code, _, _ := strings.Cut(rest, `"`)
	return code
}

// tellRefused tells the observers of the tool req calls (a
// trace.Recorder, otelkit) that the server refused the call before it ran,
// as [llmtoolkit.Execute] does for the calls it refuses: the Recorder then
// records it as a refused row, attributed by ctx (the caller's identity).
// A name r has no tool for is told to no one.
func tellRefused(ctx context.Context, r llmtoolkit.Resolver, req sdk.Request, log *slog.Logger, msg string, reason error) {
	cr, ok := req.(*sdk.CallToolRequest)
	if !ok || cr.Params == nil || r == nil {
		return
	}
	tool, found := llmtoolkit.FindTool(r, cr.Params.Name)
	if !found {
		return
	}
	call := llmtoolkit.ParseCallLenient("", cr.Params.Name, string(cr.Params.Arguments))
	call.ID = boundCallID(callID(ctx, cr, log), call.Arguments)
	err := fmt.Errorf("%w: %s", reason, msg)
	llmtoolkit.TellObservers(ctx, llmtoolkit.Observation{Kind: llmtoolkit.ObservedRefused, Call: call, Tool: tool,
		Result: llmtoolkit.Result{ToolCallID: call.ID, Name: call.Name, Content: msg, IsError: true, Err: err}})
}
