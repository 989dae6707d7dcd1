// Package agentloop runs the agentic loop that every tool-using host needs:
// send the conversation to a model, execute the tool calls it asks for, send
// the results back, and repeat until the model answers without tools.
//
// The loop is transport-agnostic: the model is a [SendFunc] the host
// supplies, so any provider (see package provider for the OpenAI, Anthropic
// and Gemini wire formats) or a scripted fake (llmtoolkittest.ScriptedModel)
// plugs in. Tools run through [llmtoolkit.Execute], so unknown tools, invalid
// arguments and panics go back to the model as error results instead of
// ending the loop.
//
// Run stops with an error callers can branch on: [ErrMaxIterations], a
// [*CircuitBreakerError] (wrapping [ErrCircuitBreaker]) when a tool keeps
// failing the same way, a [*HaltedError] (wrapping [ErrHalted]) when a tool
// calls [llmtoolkit.Halt], an [*LLMError] when the model call fails, and the
// context's error when ctx ends. Hosts follow the loop as it runs through
// [Options.OnEvent] (each tool call, Display payload and result) and
// [Options.OnIteration] (each round with its timings).
//
// # Bounds and panics
//
// A turn is bounded: at most [Options.MaxToolCalls] (128) calls of one answer
// run, each call past it answered with an [ErrTooManyCalls] error result (not
// counted by the breaker, nor are the host's refusals: llmtoolkit.ErrDenied
// and llmtoolkit.ErrLimitReached); results are cut to [Options.MaxTurnResultBytes]
// (4 MiB per turn, in call order) with a note saying what was cut
// (TestTurnBounds: 2,000 calls of 256 KiB). A panic in the SendFunc ends Run
// with an [*LLMError] wrapping a [*ModelPanicError], and one in OnEvent (on
// any goroutine), OnIteration or Stop with a [*CallbackPanicError]. The loop
// scrubs the declared secrets of every turn's calls (and of the calls in
// the history it was given) from the error it returns, logs, gives the
// Tracer and durable engines store (a breaker's message, a halt's reason, a
// panic value, any error's text), and from the panic values it logs
// (TestRunErrorsCarryNoSecretOfAnEarlierTurn), and from what the context
// policy stores: spill files (and the head and tail the model gets of a
// spilled result), compaction summaries, cleared stubs
// (TestSpillFilesHoldNoDeclaredSecret,
// TestSpillFilesOfRunToolCallHoldNoDeclaredSecret,
// TestSummaryHoldsNoDeclaredSecret, TestClearingRedactsSensitiveArguments).
// Other events and results carry the calls and the tools' words as they
// are: they are the conversation.
//
// # What the loop carries without reading
//
// The loop knows no provider: the model is a function. It carries provider
// state ([Response.Provider], [Message.Provider], llmtoolkit.Call.Provider)
// without reading it; only package provider reads or writes it. It puts the
// iteration on every call's context (llmtoolkit.Scope.Iteration).
//
// # Tracing
//
// [Options.Tracer] (interface [Tracer]) is told when the run and each model
// call start and end; the contexts it returns carry its spans. Tool calls are
// not reported through it: they run with the run's context, so a tracing
// resolver wrapper (otelkit.Instrument) nests them. This package imports no
// OpenTelemetry.
//
// # Long runs: the context budget
//
// Without a budget, the history grows with every turn and is sent whole
// each time. [Options.ContextBudget] (tokens) and [Options.ContextPolicy]
// keep a long run inside a model's window, as Anthropic's context editing
// and the coding agents do. The loop counts its history: the provider's
// own count of the last request ([Usage.ContextTokens], cached tokens
// included; package provider's parsers fill it) plus an estimate of what
// changed since ([BytesPerToken]: 3 bytes a token, an overestimate for
// code and prose, documented with its error), at the cost of the new
// messages only (BenchmarkAccountingTurn). Before each model call it
// clears the oldest tool results past ClearAt (a stub names the call, its
// arguments and the spill file or says to call again; assistant messages,
// reasoning state and call/result pairs are never touched), then compacts
// the oldest span past CompactAt with the host's Summarize (a model step,
// through the Executor: a durable run replays the recorded summary), and
// ends the run with [ErrContextBudget] rather than send a request past the
// budget. A result past SpillBytes is written whole to a file inside the
// workspace (SpillRoot, through an os.Root), and the model gets its head,
// its tail and the path to page through with read_file and grep. Each
// change is an [Event], a log record and, for a [ContextTracer], a span
// event. TestLongRunStaysInsideTheBudget runs 200 scripted coding turns
// under a 100k budget, checking every request against every provider
// format's rules.
//
// # What a run costs
//
// [Usage] counts each call's tokens as the provider reports them, cache
// reads and writes and reasoning included. With a host's price table
// ([Options.Prices]: per model, USD per million input, output, cache-read,
// cache-write and reasoning tokens), each call is priced by the model its
// answer names ([Prices.Cost]), or taken at the provider's own figure
// ([Usage.CostUSD]); [Iteration.Cost] has each call's, [RunEnd.Cost] and
// [Options.Meter] the run's, sub-agents included (a sub-agent's run finds
// its parent's meters and table on its context). A call that cannot be
// priced is counted and named ([Cost.Unpriced], [Cost.Missing]), never
// taken as free. [Options.MaxCostUSD] is a money budget beside
// MaxIterations: the run stops with a [*CostBudgetError] before a model
// call whose estimate would pass it (the estimate is documented there).
//
// # Durable runs
//
// Run keeps a run in one process's memory. To make a run survive a crash,
// a restart or a long wait, a durable-execution engine runs its steps
// through [Options.Executor]: each model call ([Executor.Model]) and each
// turn's tool calls ([Executor.Tools], each call its own step keyed by
// iteration, index and call ID, so that parallel calls replay the same
// whatever order they completed in). The engine records every step's
// outcome, in the serializable forms [ModelOutcome] and [ToolOutcome]
// (errors by kind, see [ErrorOutcome]), and when the interrupted run is
// started again with the same messages, returns the recorded outcomes
// instead of running the steps: the run reaches the same history without
// calling the model or the tools again, then goes on. Packages
// durable/dbos and durable/temporal are such engines; an engine whose
// steps run in another process calls [RunToolCall] there.
//
// The guarantees: a step whose outcome was recorded runs exactly once,
// however often the run resumes; a step interrupted before its outcome
// was recorded (a tool call in progress when the process died) runs again
// when the run resumes: at least once. A tool with side effects makes them
// idempotent with the call ID ([llmtoolkit.Call.ID], in the Call its
// resolver receives), the same on every attempt of the same call; with
// the run (set by the engine with [llmtoolkit.Scope].RunID) and the
// iteration it is [llmtoolkit.IdempotencyKey], unique across turns and
// runs, which the call ID alone is not (the IDs a parser makes up for
// Gemini repeat from turn to turn). If the engine
// itself fails, Run ends with an [*ExecutorError] and a paired history.
// With an Executor, the loop itself starts no goroutine and blocks on
// nothing but the Executor and the host's callbacks (it reads the clock
// only for the durations it reports), so Run can run inside a
// deterministic workflow when the Executor runs its steps with the
// engine's own primitives.
// Without an Executor, the loop runs in-process as it always has, at the
// same cost.
package agentloop
