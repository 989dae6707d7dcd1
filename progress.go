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
