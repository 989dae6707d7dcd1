package llmtoolkit

import "context"

// Progress is how far a running tool has got, reported with
// [ReportProgress].
type Progress struct {
	// Progress is the amount done so far; it should grow with each report.
	Progress float64
	// Total is the whole amount, 0 when unknown.
	Total float64
	// Message says what the tool is doing, for a person.
	Message string
}

type progressFuncKey struct{}

// ReportProgress tells the host how far a running tool has got: agentloop
// emits it as an EventProgress event, and an MCP server (package mcp) sends
// it to a client that asked for progress as a notifications/progress. Like
// [Show], it does nothing when no one listens.
func ReportProgress(ctx context.Context, p Progress) {
	if fn, ok := ctx.Value(progressFuncKey{}).(func(Progress)); ok && fn != nil {
		fn(p)
	}
}

// ProgressFuncFrom returns the function [ReportProgress] calls in ctx, or
// nil when no one listens: for a tool that forwards progress it receives
// from elsewhere (the MCP client of package mcp asks a server for progress
// only when it is non-nil).
func ProgressFuncFrom(ctx context.Context) func(Progress) {
	fn, _ := ctx.Value(progressFuncKey{}).(func(Progress))
	return fn
}

// WithProgressFunc returns a context in which every [ReportProgress] calls
// fn, as it happens.
func WithProgressFunc(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressFuncKey{}, fn)
}
