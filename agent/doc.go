// Package agent is the layer a coding agent needs around its tools, built
// from parts a host picks: a permission check before every call, hooks, a
// plan phase that ends on approval, a todo list, and synchronous
// sub-agents. Every part is an ordinary [llmtoolkit.Resolver] or a function
// for [agentloop.Options], so it composes with [llmtoolkit.Compose] and
// passes through trace.Record.
//
// # Permissions
//
// [New] builds the [Permissions] of one run from a [Config]; its
// [Permissions.Guard] wraps the run's resolver. Every call that reaches the
// guard is checked in this order, the first refusal winning:
//
//  1. the mode ([Mode]): the plan-mode tool is refused outside the plan
//     mode; bypass lets every other call through to step 2 without asking;
//     plan refuses every tool not annotated read-only except the plan-mode
//     tool; accept_edits lets read-only tools and file edits through
//     without asking; default asks for every call;
//  2. the deny rules ([Rule]), in every mode, bypass included: a match
//     refuses the call;
//  3. the allow rules: a match lets the call through without asking;
//  4. the PreToolUse hooks ([Hooks]), in order, then those of the
//     matchers naming the tool ([HookMatcher]; one naming bash also sees
//     every command a tool runs or types, see "Commands, jobs and
//     terminals"): each may refuse the call or change its arguments
//     (re-validated against the tool's schema, and checked again against
//     the deny rules);
//  5. the [CanUseTool] callback, for a call nothing above let through: it
//     allows, refuses with a message, or allows with changed arguments
//     (re-validated and checked against the deny rules too), or leaves the
//     call pending ([Pending]) for someone who answers later.
//
// A tool that learns while it runs which files it writes (codetools'
// rename, whose files the language server names) asks the guard about
// each before writing any: each is checked as multi_edit's call on it
// would be, steps 1 to 5, and one refusal refuses the whole call.
//
// # Approval over MCP
//
// A guarded resolver served over MCP (mcp.Handler, mcp.Serve) asks the
// MCP client's user with mcp.Approval in its callback: the first call
// fails, pending, with an input-required result (SEP-2322) asking the
// client for an elicitation; the client's user answers and the client
// calls again with the answer, which mcp.Approval returns. The state of
// the question is signed and carried by the client, so any replica
// answers the second call:
//
//	CanUseTool: func(ctx context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
//		ok, err := mcp.Approval(ctx, call)
//		switch {
//		case errors.Is(err, mcp.ErrNotServed):
//			return agent.Deny("no one to ask")
//		case err != nil:
//			return agent.Pending(err) // asks the client, the call does not run
//		case !ok:
//			return agent.Deny("the user refused this call")
//		}
//		return agent.Allow()
//	},
//
// A pending call is not a refusal: no Observer and no PostToolUse hook
// hears of it, so a trace.Recorder inside the guard records the call once,
// when it is decided (a Recorder outside the guard records each pending
// round as an error, and a recipe call pending at its gate is reported as
// refused by [llmtoolkit.Execute]).
//
// Hooks and the callback receive a deep copy of the call's arguments: a
// change made in place is not applied; only the arguments a [Decision]
// returns are, once validated and checked against the deny rules.
//
// A recipe call (a tool with a [llmtoolkit.Tool.Recipe], whose plan
// [llmtoolkit.Execute] runs itself) goes through the same check before its
// plan runs, through the gate the guard adds to its definition; its steps
// are then checked one by one. A recipe call given to the guard's Resolve
// (outside Execute) is run the same way ([llmtoolkit.ResolveRecipe]): its
// steps, toolsearch's call_tool's included, never run below the guard
// unchecked (TestRecipeStepsSeenByEveryGuardOnBothPaths).
//
// A refusal is a [*llmtoolkit.DeniedError]: the model reads that the call
// was denied and why, a trace.Recorder wrapped around the guard records it,
// and agentloop's circuit breaker does not count it. After the tool ran,
// the PostToolUse hooks may replace the content the model sees, and the
// PostToolUseFailure hooks see failures. A panic in a hook or the callback
// is a failure of that call, never of the host. Hooks and the callback
// receive the call's context: [llmtoolkit.Scope].Session and
// [llmtoolkit.Scope].Iteration work on it.
//
// # Phases
//
// [PlanMode] is the plan-mode tool (exit_plan_mode): in the plan mode the
// guard offers only read-only tools and this one; the model calls it with
// its plan, the host's [ApprovePlan] callback approves it (the run switches
// to the mode the host chose, and the guard offers the newly allowed tools
// from the next iteration) or rejects it (the model reads why). Each switch
// is a new version of the mode ([Permissions.Version]); it applies to every
// call but the other calls of the turn that made it
// ([llmtoolkit.Scope].Turn), so a sub-agent spawned later, or a second run
// sharing the permissions, is checked in the current mode.
//
// # Todo list and sub-agents
//
// [Todos] is the todo_write tool and the per-session store behind it.
// [SpawnAgent] is the spawn_agent tool: a synchronous sub-agent run on
// agentloop with its own instructions, tools, iteration limit and deadline,
// in the parent's session, its calls marked with its id
// ([llmtoolkit.Scope].AgentID). A sub-agent runs under its parent's
// permissions: its tools are wrapped in the guard of every [Permissions]
// the spawn_agent call went through (their mode, rules, hooks and
// callback), then in [SubAgentConfig.Permissions], which can only refuse
// more. A run's sub-agents, at every depth, are bounded in number and in
// how many run at once ([SubAgentConfig.MaxSubAgents]).
//
// # Paths
//
// The guard decides on the file a call opens, not on its spelling. A tool
// that declares its path arguments (llmtoolkit.Tool.Paths) gives the
// function it opens them with; glob rules on a declared argument match that
// canonical path, and a path the tool would refuse (outside the root,
// directly or through a link) is refused by the guard first. Deny globs that
// cover a tool's path argument are handed to it
// (llmtoolkit.Scope.ExcludedPaths): codetools' grep, glob, tree and
// list_directory leave those folders out, never open them, and end their
// answer with what they left out. The globs of every deny rule on an
// argument some tool declares as a path, whichever tool it names, go to
// every call (llmtoolkit.Scope.HiddenPaths): codetools' language servers,
// which serve every tool, never see those files
// (TestLanguageServersHideEveryToolsDenyRules). Every call also carries
// the guard's read check (internal/readcheck): a path is checked as
// read_file's call on it would be (deny and allow rules of every spelling,
// the PreToolUse hooks, the CanUseTool callback, in the run's mode;
// undecided is refused, observers are not told). The language servers hide
// every path of the tree it refuses, so the files a server cannot open are
// those read_file is refused (TestLanguageServersHideWhatReadFileRefuses);
// hooks and the callback are asked about each path of the tree when a
// server starts, and about each new file (a call with no ID, never
// run), so they must decide such calls without a person (a callback that asks one should allow read_file in
// ModeAcceptEdits, where it is not asked, or answer from its own rules).
// Other arguments are matched by their text
// (numbers and booleans by their JSON text, arrays element by element: any
// element for deny, all for allow). What this cannot promise: a tool that
// declares no paths (MCP tools, the host's) is matched on the cleaned
// spelling; regexp rules are not exclusions of walks; rules on bash command text are
// advisory (a command can write anywhere the shell can); and the check and
// the open are two moments, so a link swapped in between is caught only by
// os.Root's own confinement to the root. A hard link is a second name no
// path rule can see: while deny rules with a Glob on a path argument are in
// force for the tool (the guard hands their globs to it,
// llmtoolkit.Scope.ExcludedPaths), codetools' tools that read or write contents (read_file, grep, edit_file,
// multi_edit, append_to_file) refuse a regular file with more than one
// name, counted on the opened descriptor (grep over a folder leaves it out
// with a note, file_info shows "links: N" and skips its contents;
// write_file replaces the name and never reaches the other names'
// contents): TestHardLinkToDeniedFile. A tool of the host's that opens
// files itself must make the same check.
//
// # Commands, jobs and terminals
//
// The guard decides on the command a call runs, not on the tool's name: a
// tool that declares its commands (llmtoolkit.Tool.Commands) has each one
// checked as a call of bash ([BashToolName]) with that command line
// ([BashCommandArgument]), so the rules on bash hold for codetools'
// exec_command (its cmd) and bash's background jobs alike: a deny rule
// matching the command refuses the call, and allow rules matching every
// command let it run without asking. What write_stdin types into a terminal
// is checked line by line, when Enter is typed: the line as the terminal
// has it, the text typed by earlier calls included, backspace, Ctrl-U and
// Ctrl-C applied; a deny rule matching it refuses the call (nothing is
// typed). Typed lines are never allowed by bash's allow rules (a line is
// a command only at a shell's prompt; in a REPL or an editor it is what
// that program makes of it): the host allows a terminal as a whole, by
// allowing write_stdin (a rule, its callback, or the mode). The hooks
// decide on the same commands: a [HookMatcher] whose Tool matches bash
// runs its hooks, for a call of any other tool that declares commands,
// once for each command it runs and each line it types, as bash's call
// of that line, from the one reading of the declaration the rules check
// (a bash call itself is seen once, as it is): a hook refusing a command
// refuses it through bash, bash in the background, the persistent bash,
// exec_command, shell and write_stdin alike. Such a hook may refuse or
// leave pending, not rewrite another tool's command (that refuses the
// call); the hooks of [Hooks].PreToolUse see each call under its own
// name (TestBashHookSeesEveryCommand, FuzzRulesAndHooksSeeTheSameCommands).
// These checks
// are advisory as all rules on command text are (see below); the job tools
// are checked as the tools they are (job_output and job_list read-only,
// job_kill not), and a job is reachable only from the session, run and
// agent that started it (codetools): a sub-agent's jobs are its own, and
// are killed when it ends (spawn_agent marks its calls' context with its
// end, internal/calltask) (TestJobCommandsCheckedAsBash,
// TestSubAgentJobsAreTheirs).
//
// # Denials and traces
//
// The model reads "permission denied: tool "X" was not run: WHY"; agentloop's
// breaker neither counts a denial nor resets the tool's streak. The guard
// tells the tool's Observers of each refusal through
// llmtoolkit.TellObservers, as Execute does for the calls it refuses, so a
// trace.Recorder inside the guard records it: perms.Guard(trace.Record(tools,
// db)) is the usual order. A Recorder outside the guard works too: it lists
// the guard's tools as the guard lists them now (llmtoolkit.ObservedTools),
// and records refusals as the guard's errors (TestDenialsAndSubAgentsAreTraced
// runs both orders). Tests: TestCheckOrder, TestModeByKind (every mode ×
// read-only, edit, other and unknown tools), TestRecipeCallIsChecked,
// TestModeSwitchesByVersion.
//
// # Hooks and the loop
//
// The loop-level Stop hooks plug into agentloop.Options.Stop
// ([Permissions.Stop]): called when the model answers without calls, one may
// return a message that becomes the next user message, still bounded by
// MaxIterations. A Stop hook's panic is logged and counts as not asking to
// continue. agentloop reads the Resolver's list before every model call (when
// Options.Tools is nil), so after an approval the model is offered the new
// mode's tools from the next iteration.
//
// # Todo list
//
// [Todos] keeps one list per session key (the session map's conversation_id
// by default; none is an error, never a shared list), under one mutex; the
// whole list is replaced per call (at most [MaxTodos] items, ids at most
// [MaxTodoID] bytes and content [MaxTodoContent], one in_progress, unique
// ids; an item without an id keeps its previous id by content). The host
// learns of it through TodoConfig.OnChange, a todos Display ([TodosPayload])
// and [Todos.List].
//
// # Sub-agents
//
// spawn_agent runs agentloop.Run synchronously on a context derived from the
// parent call's: the session and trace attribution carry over, cancelling
// the parent cancels the child, llmtoolkit.Scope.AgentID marks its calls, and
// the parent's show function is cleared so the child's Displays do not land
// on the parent's call. Its tools are ReadOnly of the host's set unless
// AllowMutating; depth is counted on the context (MaxDepth, default 1: a
// sub-agent's spawn_agent is refused with [ErrMaxDepth]). The result is the
// final answer; a subagent Display ([SubAgentPayload]) is shown either way.
// The tool is annotated read-only when every tool it offers is, so plan mode
// allows it. The outermost Permissions keeps the run's budget: MaxSubAgents
// (16) started at every depth, MaxConcurrentSubAgents (4) at once; past them
// [ErrSubAgentBudget] (a top-level spawn waits for a place within its
// deadline, a nested one is refused at once, so sub-agents never wait for
// each other). Both refusals wrap llmtoolkit.ErrLimitReached: agentloop's
// breaker does not count them, so 40 spawns in one turn leave the model
// free to do the rest itself (TestSubAgentBudgetDoesNotTripTheBreaker). The child's loop runs on its own goroutine: spawn_agent
// returns at the deadline even when a child tool ignores its context; the
// stuck call keeps its goroutine (and its budget place) until the tool
// returns, and its result is dropped. A panic in SubAgentConfig.OnEvent, on
// whatever goroutine, fails the call. Its model calls are priced with the
// parent run's table (or SubAgentConfig.Prices) and count in the parent's
// cost and money budget (agentloop.Options.MaxCostUSD): the payload's
// costUsd is the sub-agent's share.
//
// # Workspaces
//
// A sub-agent may work in a folder of its own ([SubAgentConfig.Isolation],
// or the model's isolation argument with
// [SubAgentConfig.ModelChoosesIsolation]): IsolationWorktree, a git
// worktree on a new branch agent/ID at the parent's HEAD (the parent's
// uncommitted changes are not in it), or IsolationCopy, a bounded copy
// (cloned blocks where the file system has them; what .gitignore ignores
// and the host excludes left out of it, its diff and its apply) for any
// folder. The
// host's [Workspaces] ([NewWorkspaces]) makes them in WorkspaceConfig.Dir,
// outside the parent's tree, records each with the process that made it,
// and at start removes those a dead process left (never a live host's);
// Close discards every one neither applied nor kept. The sub-agent's tools
// are the host's, made for the workspace by WorkspaceConfig.Tools, rooted
// at the place of the parent's root in it: so codetools' confinement, bash
// and its sandbox, background jobs (ended when the sub-agent ends) and a
// checkpointer the host adds there are the workspace's, and the parent's
// permission rules, on canonical paths relative to the root, hold there
// unchanged (the sub-agent also runs inside the parent's guards, as
// always). A sandbox rooted in a worktree does not show the parent's
// repository: the worktree's .git file names a folder outside the
// sandbox's view, so neither git -C, nor that path, nor a hook written
// there reaches it ([Workspace].GitDir is the folder to keep out of
// Readable). That holds whatever the factory does: every tool of the
// sub-agent that runs commands (llmtoolkit.Tool.Commands) must declare
// the OS sandbox around them (Commands.Sandbox, as codetools' bash, shell,
// exec_command and write_stdin do under WithSandbox), writing only inside
// the workspace and reading neither the parent's root nor its repository;
// otherwise the workspace is refused with [ErrUnconfined], naming the
// tool and the fix, and a call of a tool the resolver does not list is
// refused too (WorkspaceConfig.AllowUnconfinedCommands lifts this: such
// commands then reach whatever the host's user can). The host's own git commands on a worktree never read what the sub-agent
// wrote in its .git file, and run no hook.
//
// When the sub-agent ends, its tools are closed and its changes read: the
// payload carries the diff (capped, DiffTruncated), the patch file
// (PatchDir/ID.patch in the parent's root, git-ignored, removed at Close)
// and the outcome of WorkspaceConfig.Decide: apply (a three-way merge per
// file into the parent's working tree, its uncommitted changes included;
// one conflict, or one file the parent's guards refuse through the write
// check, writes nothing and names each file), keep (branch or folder left,
// out of the registry) or discard; ActionAsk, or a conflict, leaves it
// waiting for the model's finish_workspace (WorkspaceConfig.ModelDecides)
// or the host's [Workspaces.Finish]. A sub-agent cancelled or abandoned at
// its deadline is discarded. The answer ends with one line naming the
// workspace (isolation, branch, folder, patch file, outcome): the model
// reads it and the spawn_agent trace row holds it. A sub-agent of a
// sub-agent in a workspace works in that workspace. In a durable run
// (llmtoolkit.Scope.RunID) a workspace is named by the run and the call's
// idempotency key: a run resumed after a crash runs the spawn_agent call
// again, and the sub-agent starts over in the workspace the interrupted
// attempt left (SubAgentPayload.Resumed; its task says so), which the
// next start's sweep keeps while WorkspaceConfig.MayResume reports the
// run may resume. A workspace left waiting for finish_workspace when its
// host crashed is kept, not offered again.
//
// # What the permission layer promises, and what it does not
//
// It decides on the call the tool receives: the mode, the rules (after any
// hook or callback change), the recipe call and its steps, a sub-agent's
// calls. It cannot decide what a command does: rules on bash's command text
// are advisory (a regexp cannot follow quoting, variables, scripts or
// programs the command starts), so an allow rule on bash is a convenience,
// not a boundary; what the shell can reach is bounded by the OS sandbox
// around it (codetools.WithSandbox), not by this package. Likewise a rule on
// a host tool's argument sees that argument as sent, not what the tool makes
// of it. The guard never runs a tool itself: it decides and delegates.
//
// # Files
//
// permissions.go, mode.go, rules.go, decision.go and arguments.go (the deep
// copy hooks receive) hold the permissions; guard.go the guard; hooks.go the
// hooks (a panic in one, or in the callback, is the call's [llmtoolkit.ErrToolPanic]);
// lineage.go what a sub-agent inherits and the run's sub-agent budget;
// plan.go the plan-mode tool; todos.go todo_write; subagent.go spawn_agent;
// workspace.go the sub-agents' workspaces and finish_workspace;
// display.go their Display payloads.
package agent
