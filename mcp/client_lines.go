package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// extSender sends a request of an extension the SDK's client cannot send
// (skills/list): over HTTP ([taskRPC]) or on a line transport
// ([lineCaller]).
type extSender interface {
	send(ctx context.Context, method, name string, params, meta map[string]any) (json.RawMessage, error)
}

// lineCaller sends a client's own requests on its line transport's
// connection and takes their answers from the transport before the SDK
// sees them (their ids are its own).
type lineCaller struct {
	session *sdk.ClientSession
	impl    *sdk.Implementation

	mu      sync.Mutex
	conn    *lineConn
	next    int
	waiting map[string]chan *jsonrpc.Response
}

func (lc *lineCaller) attach(c *lineConn) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.conn = c
}

func (lc *lineCaller) attached() bool {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.conn != nil
}

// lineIDPrefix marks the ids of a lineCaller's requests.
const lineIDPrefix = "llmtoolkit-ext-"

// deliver hands resp to the request waiting for it, and reports whether
// one was.
func (lc *lineCaller) deliver(resp *jsonrpc.Response) bool {
	id, ok := resp.ID.Raw().(string)
	if !ok {
		return false
	}
	lc.mu.Lock()
	ch, ok := lc.waiting[id]
	delete(lc.waiting, id)
	lc.mu.Unlock()
	if ok {
		ch <- resp // buffered: never blocks the reader
	}
	return ok
}

func (lc *lineCaller) send(ctx context.Context, method, _ string, params, meta map[string]any) (json.RawMessage, error) {
	version := ""
	if init := lc.session.InitializeResult(); init != nil {
		version = init.ProtocolVersion
	}
	if version >= CurrentProtocolVersion {
		if meta == nil {
			meta = map[string]any{}
		}
		meta[sdk.MetaKeyProtocolVersion] = version
		meta[sdk.MetaKeyClientInfo] = lc.impl
		meta[sdk.MetaKeyClientCapabilities] = map[string]any{"extensions": map[string]any{SkillsExtension: map[string]any{}}}
	}
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	lc.mu.Lock()
	if lc.waiting == nil {
		lc.waiting = map[string]chan *jsonrpc.Response{}
	}
	lc.next++
	key := lineIDPrefix + strconv.Itoa(lc.next)
	ch := make(chan *jsonrpc.Response, 1)
	lc.waiting[key] = ch
	conn := lc.conn
	lc.mu.Unlock()
	defer func() {
		lc.mu.Lock()
		delete(lc.waiting, key)
		lc.mu.Unlock()
	}()
	id, err := jsonrpc.MakeID(key)
	if err != nil {
		return nil, err
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: method, Params: raw})
	if err != nil {
		return nil, err
	}
	if conn.isClosed() {
		return nil, sdk.ErrConnectionClosed
	}
	if _, err := conn.out.Write(append(data, '\n')); err != nil {
		return nil, fmt.Errorf("mcp: sending %s: %w", method, err)
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			var werr *jsonrpc.Error
			if errors.As(resp.Error, &werr) {
				return nil, werr
			}
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-conn.closed:
		return nil, sdk.ErrConnectionClosed
	case <-conn.done:
		return nil, sdk.ErrConnectionClosed
	}
}
