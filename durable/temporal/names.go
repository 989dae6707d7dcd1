package temporal

// The names this package registers and sends. A worker registers the
// workflow and the activities under them ([Register]); a client starts
// runs, signals approvals and queries them by them.
const (
	// WorkflowName is the agent run's workflow type.
	WorkflowName = "llmtoolkit.AgentRun"
	// ModelActivityName is the activity type of one model call.
	ModelActivityName = "llmtoolkit.ModelCall"
	// ToolActivityName is the activity type of one tool call.
	ToolActivityName = "llmtoolkit.ToolCall"
	// ApprovalSignal is the signal that carries a person's [Approval].
	ApprovalSignal = "llmtoolkit.approval"
	// PendingApprovalsQuery answers with the calls a run waits to have
	// approved ([]PendingApproval).
	PendingApprovalsQuery = "llmtoolkit.pending_approvals"
)
