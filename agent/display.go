package agent

// The Display kinds this package's tools show (llmtoolkit.Display.Kind).
const (
	// DisplayTodos is shown by todo_write; its payload is a [TodosPayload].
	DisplayTodos = "todos"
	// DisplaySubAgent is shown by spawn_agent; its payload is a
	// [SubAgentPayload].
	DisplaySubAgent = "subagent"
)

// TodosPayload is the payload of a "todos" Display: the whole list after a
// todo_write call.
type TodosPayload struct {
	// Todos is the list, in the model's order.
	Todos []Todo `json:"todos"`
}

// SubAgentPayload is the payload of a "subagent" Display: what a
// spawn_agent call's sub-agent did.
type SubAgentPayload struct {
	// ID is the sub-agent's id, also recorded with each of its calls
	// (llmtoolkit.Scope.AgentID, trace's agent_id column).
	ID string `json:"id"`
	// Description is the short label the model gave the task, if any.
	Description string `json:"description"`
	// Iterations is how many model calls the sub-agent made.
	Iterations int `json:"iterations"`
	// ToolCalls is how many tool calls it made.
	ToolCalls int `json:"toolCalls"`
	// DurationMS is how long it ran, in milliseconds.
	DurationMS int64 `json:"durationMs"`
	// Usage is the tokens its model calls used, summed.
	Usage SubAgentUsage `json:"usage"`
	// CostUSD is what its model calls cost, in US dollars, its own
	// sub-agents' included (agentloop.Options.Prices; the parent run's
	// price table unless SubAgentConfig.Prices is set). It leaves out
	// the calls counted in UnpricedCalls.
	CostUSD float64 `json:"costUsd"`
	// UnpricedCalls is how many of its model calls could not be priced
	// (their model, or a kind of token they used, has no price).
	UnpricedCalls int `json:"unpricedCalls"`
	// MissingPrices names what had no price (agentloop.Cost.Missing),
	// joined with ", "; empty when every call was priced. A string, so
	// that the payload stays comparable.
	MissingPrices string `json:"missingPrices"`
	// Error is why it stopped without a final answer (iteration limit,
	// deadline, cancellation, a model error); empty when it answered.
	Error string `json:"error"`
	// Isolation is where it worked: none, worktree or copy
	// ([SubAgentConfig.Isolation]).
	Isolation string `json:"isolation"`
	// Workspace is the folder its tools were rooted in, for a worktree
	// or a copy; empty for none.
	Workspace string `json:"workspace"`
	// Branch is a worktree's branch.
	Branch string `json:"branch"`
	// Files is how many files its changes touch.
	Files int `json:"files"`
	// Diff is its changes as one patch (paths relative to the parent's
	// root), cut at WorkspaceConfig.MaxDiffBytes on a line end.
	Diff string `json:"diff"`
	// DiffTruncated says Diff was cut; the patch file is whole.
	DiffTruncated bool `json:"diffTruncated"`
	// PatchFile is the whole patch's path relative to the parent's root
	// (WorkspaceConfig.PatchDir), for the model to read; empty without
	// changes.
	PatchFile string `json:"patchFile"`
	// Outcome is what became of the workspace: applied, kept, discarded
	// or waiting (for the model's finish_workspace or the host's
	// [Workspaces.Finish]); empty for none.
	Outcome string `json:"outcome"`
	// Conflicts names, when an apply conflicted, each file and why
	// (nothing was written).
	Conflicts string `json:"conflicts"`
	// Resumed says the workspace was found again: a durable run resumed
	// after a crash re-ran this spawn_agent call, and the sub-agent
	// started over in the workspace its interrupted attempt left.
	Resumed bool `json:"resumed"`
}

// ReportedCost returns CostUSD and UnpricedCalls: trace.Recorder writes them
// in the spawn_agent call's row (trace.CostReporter).
func (p SubAgentPayload) ReportedCost() (usd float64, unpricedCalls int) {
	return p.CostUSD, p.UnpricedCalls
}

// SubAgentUsage counts the tokens of a sub-agent's model calls.
type SubAgentUsage struct {
	// InputTokens is the number of prompt tokens.
	InputTokens int `json:"inputTokens"`
	// OutputTokens is the number of generated tokens, reasoning included.
	OutputTokens int `json:"outputTokens"`
	// CacheReadTokens is how many prompt tokens were read from the
	// provider's cache (see agentloop.Usage).
	CacheReadTokens int `json:"cacheReadTokens"`
	// CacheWriteTokens is how many prompt tokens were written to it.
	CacheWriteTokens int `json:"cacheWriteTokens"`
	// ReasoningTokens is how many of OutputTokens were reasoning.
	ReasoningTokens int `json:"reasoningTokens"`
}
