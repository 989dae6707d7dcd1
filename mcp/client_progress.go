package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit"
)

// progressRouter forwards the notifications/progress a server sends to the
// caller of the call that carried their token: [Client.Resolve] registers
// a token when its context has a progress function
// ([llmtoolkit.Listeners].Progress) and removes it when the call returns.
// A notification for no live call (a late one, or a token this client did
// not send) is dropped: a progress function is never called after its
// call has returned.
type progressRouter struct {
	prefix string // per client, so that tokens name the client
	next   atomic.Uint64
	log    *slog.Logger

	mu    sync.Mutex
	calls map[string]*progressCall
}

// progressCall is the caller of one call. Its mutex serializes the
// forwarding with the end of the call: once done is set, fn is not called.
type progressCall struct {
	mu   sync.Mutex
	fn   func(llmtoolkit.Progress)
	done bool
}

func newProgressRouter(log *slog.Logger) *progressRouter {
	return &progressRouter{prefix: fmt.Sprintf("llmtoolkit-%p-", new(byte)), log: log, calls: map[string]*progressCall{}}
}

// add registers fn for a new call and returns its token and the function
// that ends it.
func (r *progressRouter) add(fn func(llmtoolkit.Progress)) (token string, end func()) {
	token = fmt.Sprintf("%s%d", r.prefix, r.next.Add(1))
	call := &progressCall{fn: fn}
	r.mu.Lock()
	r.calls[token] = call
	r.mu.Unlock()
	return token, func() {
		r.mu.Lock()
		delete(r.calls, token)
		r.mu.Unlock()
		call.mu.Lock()
		call.done = true
		call.mu.Unlock()
	}
}

// handle is the SDK client's ProgressNotificationHandler: it forwards a
// notification to its call, recovering a panic of the caller's function.
func (r *progressRouter) handle(ctx context.Context, params *sdk.ProgressNotificationParams) {
	if params == nil {
		return
	}
	token, ok := params.ProgressToken.(string)
	if !ok {
		return
	}
	r.mu.Lock()
	call := r.calls[token]
	r.mu.Unlock()
	if call == nil {
		return
	}
	call.mu.Lock()
	defer call.mu.Unlock()
	if call.done {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			r.log.ErrorContext(ctx, "mcp: the caller's progress function panicked", slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
		}
	}()
	call.fn(llmtoolkit.Progress{Progress: params.Progress, Total: params.Total, Message: params.Message})
}
