// Package temporal runs [agentloop.Run] as a Temporal workflow, on
// Temporal's Go SDK (go.temporal.io/sdk), so that an agent run survives a
// crash, a restart and a long wait: each model call and each tool call is
// an activity whose outcome the Temporal server records, and a worker that
// picks up a run another worker was running replays the recorded outcomes
// instead of calling the model and the tools again.
//
// # Shape
//
// [Workflow] (registered as [WorkflowName]) runs the same loop as
// agentloop.Run, through agentloop's Executor seam: the loop's code runs in
// the workflow, and the workflow's executor turns each model call into a
// [ModelActivityName] activity (ID "model/ITERATION") and each tool call
// into a [ToolActivityName] activity (ID "tool/ITERATION/INDEX/CALLID").
// A turn's calls are started in call order, at most MaxParallel at once,
// as futures; no goroutine, wall clock or blocking call runs in workflow
// code. The activities run on the worker with its [Activities]: the
// SendFunc, and the agentloop.Options whose Resolver runs the calls through
// agentloop.RunToolCall, the loop's own per-call function. Outcomes travel
// in agentloop's stored forms (agentloop.ModelOutcome, agentloop.ToolOutcome),
// so errors keep their kinds: errors.Is(err, llmtoolkit.ErrHalt) holds in
// the workflow for a tool that halted on the worker.
//
//	w := worker.New(c, "agents", worker.Options{})
//	err := temporal.Register(w, &temporal.Activities{Send: send, Options: agentloop.Options{Resolver: session}})
//	...
//	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "run-42", TaskQueue: "agents"},
//		temporal.WorkflowName, temporal.RunInput{Messages: msgs})
//	var out temporal.RunOutput
//	err = run.Get(ctx, &out) // out.Response, out.History, out.Error()
//
// The example in examples/devworker runs a worker against a local
// development server (temporal server start-dev).
//
// # Guarantees
//
//   - A completed step runs exactly once: its recorded outcome (the model's
//     response, the tool's result) is what every replay of the run reads,
//     however often the run moves between workers. The model is called once
//     per turn.
//   - The step that was interrupted (the worker died, the attempt timed out
//     or failed with a [Retryable] error) runs at least once: Temporal runs
//     it again under the run's retry policy (RunInput.ModelRetry,
//     RunInput.ToolRetry; [DefaultMaxAttempts] attempts by default). When the
//     attempts are spent, a tool call goes back to the model as an error
//     result, and a model call ends the run with an agentloop.LLMError.
//   - So a tool with side effects must be idempotent, and its key is
//     llmtoolkit.IdempotencyKey(ctx, call): the run (the tool activity puts
//     the workflow ID on its context with llmtoolkit.Scope.RunID), the
//     iteration and the call ID (llmtoolkit.Call.ID). The same call of the
//     same run has the same key on every attempt and every worker, since the
//     model's answer that holds it is itself a recorded step; the call ID
//     alone repeats across turns and runs when a provider parser made it
//     up. A tool that sends an email records the keys it has sent and skips
//     one it has seen. The attempt number is activity.GetInfo(ctx).Attempt.
//     Package agent's spawn_agent uses that key: a retried call's
//     sub-agent keeps its id and, in a workspace of its own, works again
//     in the one the failed attempt left, on any worker that shares
//     agent.WorkspaceConfig.Dir (TestSubAgentRetryFindsItsWorkspace).
//   - The workflow is deterministic: replaying its history
//     (worker.NewWorkflowReplayer) gives the same steps; a change of the
//     workflow that would not (an added step, another parallelism, fewer
//     iterations) fails the replay with a non-determinism error, which is
//     how a deploy is checked against the runs in flight (see
//     replay_test.go and testdata/).
//   - A call runs only with the tool it was written for: the model
//     activity returns, with the model's answer, the fingerprints
//     (agentloop.ToolFingerprint: name, parameter schema, facts) of the
//     tools the worker offered ([ModelResult]), and each tool activity
//     refuses its call on a worker where that tool is missing or defined
//     otherwise; the run then fails with an application error of type
//     [AgentChangedType] ([ErrAgentChanged]) instead of answering the
//     recorded calls with another agent's tools
//     (TestRunMovedToWorkerWithOtherToolsStops). The loop's bounds, the
//     prompt and the context budget and thresholds (RunInput's
//     ContextBudget, ClearAt, KeepToolResults, CompactAt, KeepRecent,
//     Compact) are the run's input, recorded, so they cannot differ: no
//     agent fingerprint is needed for them. The worker's share of the
//     policy (spilling, a summarizer) acts inside the activities, whose
//     outcomes are recorded: a replay reads the spilled results and the
//     summaries back, and another worker's settings apply to new steps
//     only. A history recorded before the fingerprints replays without
//     the check.
//
// # Approvals
//
// The calls of the tools named in RunInput.Approve wait, before they run,
// for a person's [Approval], sent with [Approve] (the [ApprovalSignal]
// signal); [Pending] (the [PendingApprovalsQuery] query) lists the calls
// waiting. The wait is durable: it costs nothing while it lasts, holds for
// hours or days, and survives worker restarts. A refused call does not run;
// the model reads a permission-denied result (llmtoolkit.ErrDenied).
// RunInput.ApprovalTimeout refuses the calls still undecided after it.
//
// # Heartbeats and cancellation
//
// With RunInput.HeartbeatTimeout, a running tool heartbeats its activity
// with each progress report (llmtoolkit.ReportProgress, whose Progress is
// the heartbeat's details), and [Activities].HeartbeatEvery adds a ticker.
// An attempt without a heartbeat for the timeout is failed by the server
// and retried; on the worker, the tool's context is cancelled with
// [ErrHeartbeatTimeout] as its cause, so a stuck tool stops instead of
// running on beside its next attempt. The tool's context is also cancelled
// when its activity is: the run cancelled, another call of the same turn
// halted the run (llmtoolkit.Halt), the StartToClose timeout
// (RunInput.ToolTimeout). A cancellation reaches a running activity
// through its heartbeats, so set HeartbeatTimeout when tools run long.
//
// # Limits
//
// Each model activity's input is the whole history so far, recorded in the
// run's Temporal history: a long run with large tool results grows it
// quadratically, and Temporal limits a payload (the server's
// limit.blobSize.error, 2 MiB by default; warnings below it) and a
// history (50 MiB). Bound the results (RunInput.MaxTurnResultBytes, a
// ContextBudget) and the iterations, or continue a long conversation in a
// new run with the returned history.
//
// Images and documents (llmtoolkit.Part) are where one result alone can
// pass the payload limit: a 3 MiB screenshot is 4 MiB in base64. Each
// payload is kept under RunInput.MaxPayloadBytes ([DefaultMaxPayloadBytes]):
//
//   - with [Activities].Blobs (a [BlobStore]; [DirBlobs] keeps the blobs in
//     a folder shared by the workers), the tool activity puts every part
//     larger than Activities.InlinePartBytes (64 KiB by default) in the
//     store and records a reference in its place (a part whose URL starts
//     with [BlobScheme], keyed by the SHA-256 of the bytes); the model
//     activity reads the bytes back before it calls the model, so the
//     model sees the image while no payload, and no Temporal history,
//     holds it. RunOutput.History keeps the references: [ResolveParts]
//     puts the bytes back. The host removes the blobs when the runs that
//     refer to them are over. A reference a tool returns itself (an MCP
//     server's link) is left out, so a tool never has the model read a
//     blob it named. A client that starts a run with a user's picture
//     can do the same: Put it in the store and pass a part whose URL is
//     BlobScheme and its key ("sha256-" and the hex SHA-256 of the bytes).
//   - without a store, the parts that would make a tool result pass the
//     limit are left out whole, and the model reads a note that names
//     them, the limit and the option;
//   - a model call whose history would still pass it (images that each
//     fit, but not all together) is not sent: the run fails with an
//     application error of type [PayloadTooLargeType] ([ErrPayloadTooLarge])
//     saying so, instead of a workflow task the server refuses again and
//     again.
//
// The context estimate (agentloop) counts an image as the tokens its
// pixels cost whatever it holds, but a file part by its bytes: a
// document kept in the store is counted by its reference, far less than
// it costs. The tools offered to the model are the worker's
// (Options.Tools, or the Resolver's list), read at each model call.
// Options.OnEvent, when set on the worker, sees each tool call's events
// there; the workflow runs no host callbacks.
//
// # What the history holds
//
// Temporal keeps a workflow's input and every activity's outcome in its
// history: the conversation, each model answer with its tool calls as the
// model wrote them, and each tool's result, with its images and documents
// unless they went to [Activities].Blobs, which then holds them. A value of an argument a tool
// declares sensitive (llmtoolkit.Tool.SensitiveFields) is kept as it is,
// because an interrupted call runs again with it. Encrypt payloads with a
// converter.PayloadCodec on the client and the worker (Temporal's standard
// way) when the history must not hold them in clear. Activity IDs carry
// only iterations, indexes and call IDs.
//
// # Cost
//
// BenchmarkWorkflowStep runs a 10-turn run (21 steps: 11 model calls, 10
// tool calls) in the SDK's in-process test environment: about 0.5 ms per
// step (median of 5, 0.33 to 1.8 ms, on 2 cores at a load of 20 to 25),
// 28 KB and 360 allocations per step, against 5 µs per step for
// agentloop.Run in-process; the environment's goroutine hand-offs, not the
// encoding, dominate. A server adds a network round trip per activity and
// per workflow task, and persistence.
package temporal
