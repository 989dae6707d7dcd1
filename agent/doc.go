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
//  4. the PreToolUse hooks ([Hooks]), in order: each may refuse the call or
//     change its arguments (re-validated against the tool's schema, and
//     checked again against the deny rules);
//  5. the [CanUseTool] callback, for a call nothing above let through: it
//     allows, refuses with a message, or allows with changed arguments
//     (re-validated and checked against the deny rules too).
//
// Hooks and the callback receive a deep copy of the call's arguments: a
// change made in place is not applied; only the arguments a [Decision]
// returns are, once validated and checked against the deny rules.
//
// A recipe call (a tool with a [llmtoolkit.Tool.Recipe], whose plan
// [llmtoolkit.Execute] runs itself) goes through the same check before its
// plan runs, through the gate the guard adds to its definition; its steps
// are then checked one by one.
//
// A refusal is a [*llmtoolkit.DeniedError]: the model reads that the call
// was denied and why, a trace.Recorder wrapped around the guard records it,
// and agentloop's circuit breaker does not count it. After the tool ran,
// the PostToolUse hooks may replace the content the model sees, and the
// PostToolUseFailure hooks see failures. A panic in a hook or the callback
// is a failure of that call, never of the host. Hooks and the callback
// receive the call's context: [llmtoolkit.SessionFrom] and
// [llmtoolkit.IterationFrom] work on it.
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
// ([llmtoolkit.TurnFrom]), so a sub-agent spawned later, or a second run
// sharing the permissions, is checked in the current mode.
//
// # Todo list and sub-agents
//
// [Todos] is the todo_write tool and the per-session store behind it.
// [SpawnAgent] is the spawn_agent tool: a synchronous sub-agent run on
// agentloop with its own instructions, tools, iteration limit and deadline,
// in the parent's session, its calls marked with its id
// ([llmtoolkit.WithAgentID]). A sub-agent runs under its parent's
// permissions: its tools are wrapped in the guard of every [Permissions]
// the spawn_agent call went through (their mode, rules, hooks and
// callback), then in [SubAgentConfig.Permissions], which can only refuse
// more. A run's sub-agents, at every depth, are bounded in number and in
// how many run at once ([SubAgentConfig.MaxSubAgents]).
package agent
