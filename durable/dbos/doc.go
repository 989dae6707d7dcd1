// Package dbos runs agent loops ([agentloop.Run]) durably on DBOS Transact
// (github.com/dbos-inc/dbos-transact-golang): a run survives the death of
// its process, a restart, and a wait of hours for a person's approval.
//
// An [Engine] runs each run as a DBOS workflow under the ID the host gives
// it ([Engine.Start], [Engine.Run]); each model call and each tool call of
// the run is a DBOS step, whose outcome is recorded in the system database
// before the run goes on. The database is SQLite by default (a file, no
// server: Config.DatabaseURL "sqlite:PATH") or PostgreSQL (a URL or a
// key=value DSN). When a process dies, the next [Engine.Launch] with the
// same Config.ExecutorID resumes its interrupted runs; a live process can
// take over a dead one's runs with [Engine.Recover]. Either way the run
// replays: each recorded step returns its recorded outcome without running
// again, and the run goes on from the first step that has none.
// [Engine.Result] reads a run's result by ID, from any process.
//
// # Guarantees
//
//   - A step that completed runs exactly once: the model is called once
//     per turn and a tool call whose outcome was recorded is never run
//     again, however often the run is resumed. Outcomes are stored with
//     agentloop.EncodeModel and agentloop.EncodeResult, so a replayed
//     error keeps its meaning (errors.Is holds for the same sentinels).
//   - The step that was interrupted (the process died while it ran) runs
//     at least once: it runs again, from its start, when the run resumes.
//     A tool with side effects must be idempotent, and its key is the
//     call ID (llmtoolkit.Call.ID, in the call the resolver receives): the
//     same call of the same run has the same ID in every attempt, since
//     the model's answer that holds it is a recorded step. A tool that
//     sends an email records the call IDs it has sent and skips one it has
//     seen; one that cannot be idempotent should report, on its second
//     attempt, that it may have run already.
//   - A run runs in one process at a time. DBOS hands a recovered run to
//     one process, atomically ([Engine.Recover] from two processes at once
//     resumes it once), provided the live processes have distinct executor
//     IDs: two launched with the same one would both resume its runs, so
//     [Engine.Launch] refuses a second live process with the same
//     ExecutorID on the same database ([ErrExecutorInUse]; a PostgreSQL
//     advisory lock, an flock on a file beside a SQLite database).
//
// The crash test (crash_test.go) checks these with real processes: a
// child runs a 4-turn agent, with one call in turns 1 and 2 and two
// parallel calls in turn 3, and is killed with SIGKILL in the middle of the
// call of turn 2, after its side effect; a new process resumes the run. The
// run completes with 4 model calls (one per turn) and each completed side
// effect once; the interrupted one happens twice, or once when the tool
// keys it by call ID. Without the steps (the loop restarted from scratch)
// the same crash costs 6 model calls and repeats the side effects of turns
// 1 and 2.
//
// # Steps and their IDs
//
// DBOS numbers a workflow's steps with a counter the workflow's goroutine
// advances each time it starts one; the loop asks for its steps from that
// goroutine in a fixed order, and a turn's tool calls are started in call
// order (DBOS's Go, which takes the step's number before running it in a
// goroutine of its own), so each call gets the same number in every
// attempt even though a turn's calls run concurrently, up to
// Options.MaxParallel. Each step is also named after what it does
// (model/ITERATION, tool/ITERATION/INDEX/CALLID): DBOS checks the recorded
// name against the replayed one, so a resumed run whose code now asks for
// other steps stops with DBOS's ErrStepNondeterminism instead of reading
// another step's outcome. Step names come from the recorded answers, so
// they cannot tell that the agent changed: a run's first step
// (agent/fingerprint) records the fingerprint of the agent its AgentFunc
// built (the tools with their schemas and facts, the system prompt, the
// loop bounds, the context budget and policy as
// agentloop.ContextFingerprint hashes them), and a resumed attempt whose
// agent has another stops, before any step is replayed, with
// [ErrAgentChanged], which wraps ErrStepNondeterminism and is read back
// from the database in any process (TestCrashResumeByAnotherAgent: killed
// under one agent, resumed by another;
// TestCrashResumeWithAnotherContextPolicy). An agent without a budget and
// without spilling has the fingerprint it had before the policy counted. Deploying a change to an agent's tools or prompt while runs
// are in flight is such a change: DBOS resumes only the runs of the same
// Config.ApplicationVersion (by default a hash of the binary), and a run
// started before the fingerprint step existed stops with
// ErrStepNondeterminism at its first step.
//
// # Approvals
//
// [AskPerson] is an agent.CanUseTool that lets a person decide a call,
// durably: the call's step ends without running the tool, the run
// publishes the call ([Engine.Pending]) and waits for the answer with DBOS
// Recv, on a topic of the call ID; [Engine.Approve], from any process,
// sends it (DBOS Send) to the run by ID. The wait is recorded: a run shut
// down or killed while it waits resumes waiting, for hours if need be
// (Config.ApprovalTimeout, a week by default, then the call is denied).
// The answer applies as agent.Decision does (allow, allow with other
// arguments, deny with a message for the model); the call then runs as a
// step of its own. The permission checks before the callback (mode, rules,
// PreToolUse hooks) run again for that step, and the loop's events show
// the first attempt's "waiting" denial: keep hooks free of side effects.
//
// # Attribution
//
// Every attempt of a run is attributed to the same run: the run's context
// carries trace.WithConversation(Input.TenantID, ConversationID(runID)),
// where [ConversationID] derives a UUID from the run ID alone, so package
// trace's rows written by the first attempt and by the resumed one carry
// the same tenant and conversation IDs; the session map
// (llmtoolkit.Scope.Session) names them too, under trace's keys, for what
// reads it there (package checkpoint's checkpoints, codetools' jobs,
// package agent, otelkit); the run span that Options.Tracer
// starts (package otelkit's invoke_agent span) gets the attributes
// gen_ai.conversation.id and llmtoolkit.run.id, the same in every attempt
// (each attempt is a trace of its own). A sub-agent (package agent's
// spawn_agent) runs inside its call's step: a completed one keeps its id;
// an interrupted one runs again under the same id (derived from the
// call's idempotency key unless agent.SubAgentConfig.NewID names it) and,
// in a workspace of its own, in the workspace the interrupted attempt
// left: give agent.WorkspaceConfig.MayResume [Engine.MayResume], so that
// the next start's sweep keeps the workspaces of the runs that resume
// and removes the others (TestCrashResumeFindsTheSubAgentsWorkspace).
//
// # What the database holds
//
// To resume a run, DBOS keeps its input and every recorded step's outcome
// in the system database: the conversation, each model answer with its
// tool calls as the model wrote them, and each tool's result. A value of
// an argument a tool declares sensitive (llmtoolkit.Tool.SensitiveFields)
// is kept as it is, because an interrupted call runs again with it; the
// run's recorded error is scrubbed of them, as agentloop scrubs it. So
// the system database needs the access control that those secrets need.
// Step names carry only iterations, indexes and call IDs.
//
// On SQLite, [New] creates the database file 0600 (its folder 0700 when
// missing), whatever the umask, before DBOS opens it; SQLite gives the
// -wal and -shm files the database's mode, and the executor lock beside it
// is created 0600 too (TestStoreFilesOwnerOnly, under umask 022). A
// database file that exists keeps its mode; one readable by others is
// logged as a warning. On PostgreSQL, access is the server's roles and
// grants.
//
// # MCP tasks
//
// [TaskStore] is a store of MCP tasks (package mcp's TaskStore, given to
// mcp.Handler with mcp.WithTaskStore) for replicas of a server: a task is
// a row of the system database (table llmtoolkit_mcp_tasks, written with
// optimistic versions), so any replica answers tasks/get, tasks/update and
// tasks/cancel for it, and each round of its tool runs as a DBOS workflow
// (mcp-task/TASKID/ROUND) on the replica that created it (or the one whose
// tasks/update completed its input). When that replica dies, the next
// [TaskStore.Launch] with its ExecutorID runs the round again, from its
// start (at least once: keep such tools idempotent), and writes its
// outcome for every replica to read. TestTaskSurvivesReplicaRestart checks
// it with real processes on SQLite and PostgreSQL: a bash sleep (30 s under
// LLMTOOLKIT_STRESS=1) created on replica 1, replica 1 SIGKILLed and
// started again, the status and result read through replica 2.
//
// # Cost
//
// A recorded step costs a few milliseconds of database writes, next to
// model calls that take seconds: BenchmarkStep (bench_test.go) measured,
// as medians of 5, 1.6 to 2.5 ms a step on SQLite and 3.5 to 7 ms on a
// local PostgreSQL (fsync off), on a 2-core machine under a load of 20
// to 25, so with much noise.
package dbos
