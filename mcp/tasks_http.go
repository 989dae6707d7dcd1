package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The methods of the tasks extension the server answers.
const (
	methodTasksGet    = "tasks/get"
	methodTasksUpdate = "tasks/update"
	methodTasksCancel = "tasks/cancel"
)

// taskRoutes answers tasks/get, tasks/update and tasks/cancel, sent alone
// (not in a batch) in a POST, and hands every other request to next: the
// SDK answers methods it does not know before any middleware could. It
// sits behind the authorization (protect), like the SDK's handler.
type taskRoutes struct {
	next http.Handler
	ts   *taskServer
	srv  *sdk.Server
	log  *slog.Logger
}

// taskRequest is a JSON-RPC request of the tasks extension.
type taskRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	TaskID         *string                    `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	Meta           map[string]json.RawMessage `json:"_meta"`
}

func (tr *taskRoutes) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.Body == nil {
		tr.next.ServeHTTP(w, req)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, sdk.DefaultMaxRequestBodyBytes+1))
	req.Body = readCloser{io.MultiReader(bytes.NewReader(body), req.Body), req.Body}
	var msg taskRequest
	// Only a body that names a tasks/ method is decoded here.
	if err != nil || !bytes.Contains(body, []byte(`"tasks/`)) || json.Unmarshal(body, &msg) != nil {
		tr.next.ServeHTTP(w, req)
		return
	}
	switch msg.Method {
	case methodTasksGet, methodTasksUpdate, methodTasksCancel:
		tr.serve(w, req, &msg)
	default:
		tr.next.ServeHTTP(w, req)
	}
}

// serve answers one request of the tasks extension.
func (tr *taskRoutes) serve(w http.ResponseWriter, req *http.Request, msg *taskRequest) {
	ctx := req.Context()
	if msg.JSONRPC != "2.0" || len(msg.ID) == 0 || string(msg.ID) == "null" {
		writeRPC(w, http.StatusBadRequest, msg.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "a " + msg.Method + " request needs an id"})
		return
	}
	var p taskParams
	if len(msg.Params) == 0 || json.Unmarshal(msg.Params, &p) != nil || p.TaskID == nil {
		writeRPC(w, http.StatusOK, msg.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg.Method + " needs params with a taskId string"})
		return
	}
	// The routing headers (SEP-2243, SEP-2663) of the current protocol
	// must say what the body says.
	if v := req.Header.Get(protocolVersionHeader); v >= CurrentProtocolVersion {
		method, mok := headerValue(req, "Mcp-Method")
		name, nok := headerValue(req, "Mcp-Name")
		if !mok || method != msg.Method || !nok || name != *p.TaskID {
			writeRPC(w, http.StatusBadRequest, msg.ID, nil, &jsonrpc.Error{Code: sdk.CodeHeaderMismatch,
				Message: "the Mcp-Method and Mcp-Name headers must be the request's method and taskId"})
			return
		}
		var meta string
		if raw, ok := p.Meta[sdk.MetaKeyProtocolVersion]; ok && json.Unmarshal(raw, &meta) == nil && meta != v {
			writeRPC(w, http.StatusBadRequest, msg.ID, nil, &jsonrpc.Error{Code: sdk.CodeHeaderMismatch,
				Message: "the Mcp-Protocol-Version header must be the request's protocol version"})
			return
		}
	}
	if !tr.declared(req, &p) {
		writeRPC(w, http.StatusOK, msg.ID, nil, errMissingTasks().(*jsonrpc.Error))
		return
	}
	caller := httpIdentity(req)
	t, err := tr.ts.get(ctx, *p.TaskID, caller)
	if err != nil {
		tr.writeStoreError(w, req, msg, err)
		return
	}
	ack := &taskAck{ResultType: "complete"}
	ack.Meta = sdk.Meta{sdk.MetaKeyServerInfo: tr.ts.impl}
	switch msg.Method {
	case methodTasksGet:
		writeRPC(w, http.StatusOK, msg.ID, tr.ts.envelope(t, "complete", true), nil)
		return
	case methodTasksCancel:
		err = tr.ts.cancelTask(ctx, t.ID)
	case methodTasksUpdate:
		for k, v := range p.InputResponses {
			if _, pending := t.InputRequests[k]; !pending {
				continue
			}
			var one sdk.InputResponseMap
			if json.Unmarshal([]byte(`{"k":`+string(v)+`}`), &one) != nil {
				writeRPC(w, http.StatusOK, msg.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: "inputResponses[" + k + "] is not a response to an input request"})
				return
			}
		}
		err = tr.ts.respond(ctx, t.ID, p.InputResponses)
	}
	if err != nil {
		tr.writeStoreError(w, req, msg, err)
		return
	}
	writeRPC(w, http.StatusOK, msg.ID, ack, nil)
}

func (tr *taskRoutes) writeStoreError(w http.ResponseWriter, req *http.Request, msg *taskRequest, err error) {
	if errors.Is(err, ErrTaskNotFound) {
		writeRPC(w, http.StatusOK, msg.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no task with this taskId"})
		return
	}
	tr.log.ErrorContext(req.Context(), "mcp: the task store failed", slog.String("method", msg.Method), slog.Any("error", err))
	writeRPC(w, http.StatusOK, msg.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server's task store failed: retry later"})
}

// taskAck is the empty answer of tasks/update and tasks/cancel.
type taskAck struct {
	sdk.ResultBase
	ResultType string `json:"resultType"`
}

// declared reports whether the request's client declared the tasks
// extension: in the request's _meta, or at its legacy session's
// initialize.
func (tr *taskRoutes) declared(req *http.Request, p *taskParams) bool {
	if raw, ok := p.Meta[sdk.MetaKeyClientCapabilities]; ok {
		var caps sdk.ClientCapabilities
		return json.Unmarshal(raw, &caps) == nil && declaresTasks(&caps)
	}
	if sid := req.Header.Get(sessionIDHeader); sid != "" {
		for ss := range tr.srv.Sessions() {
			if ss.ID() == sid {
				if ip := ss.InitializeParams(); ip != nil {
					return declaresTasks(ip.Capabilities)
				}
			}
		}
	}
	return false
}

// headerValue returns the value of header key, without the whitespace
// around it, decoded from its =?base64?...?= form.
func headerValue(req *http.Request, key string) (string, bool) {
	vs := req.Header.Values(key)
	if len(vs) != 1 {
		return "", false
	}
	v := strings.TrimSpace(vs[0])
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(v, "=?base64?"), "?="))
		if err != nil {
			return "", false
		}
		v = string(b)
	}
	return v, true
}

// httpIdentity is the identity the bearer authorization found for req,
// or nil.
func httpIdentity(req *http.Request) *Identity {
	info, ok := req.Context().Value(verifiedKey{}).(*auth.TokenInfo)
	if !ok || info == nil {
		return nil
	}
	id, ok := info.Extra[identityExtraKey].(Identity)
	if !ok {
		return nil
	}
	return &id
}

// writeRPC writes a JSON-RPC response: result, or rpcErr.
func writeRPC(w http.ResponseWriter, status int, id json.RawMessage, result any, rpcErr *jsonrpc.Error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   any             `json:"error,omitempty"`
	}{JSONRPC: "2.0", ID: id, Result: result}
	if rpcErr != nil {
		resp.Error = struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		}{rpcErr.Code, rpcErr.Message, rpcErr.Data}
	}
	data, err := json.Marshal(resp)
	if err != nil {
		http.Error(w, "the answer cannot be encoded", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}
