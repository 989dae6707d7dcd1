package agentloop

import (
	"errors"
	"fmt"
)

// ErrMaxIterations is returned when the model still asks for tools after
// [Options.MaxIterations] rounds.
var ErrMaxIterations = errors.New("agentloop: maximum number of iterations reached")

// ErrCircuitBreaker is wrapped by a [*CircuitBreakerError]: the same tool
// failed with the same error too many times in a row.
var ErrCircuitBreaker = errors.New("agentloop: circuit breaker tripped")

// ErrHalted is wrapped by a [*HaltedError]: a tool called [llmtoolkit.Halt].
var ErrHalted = errors.New("agentloop: halted by a tool")

// ErrInvalidOptions is wrapped by the error Run returns for unusable
// [Options] (a negative limit, no SendFunc).
var ErrInvalidOptions = errors.New("agentloop: invalid options")

// ErrTooManyCalls is wrapped by the error of each call past
// [Options.MaxToolCalls] in one turn: answered without running.
var ErrTooManyCalls = errors.New("agentloop: too many tool calls in one turn")

// CircuitBreakerError names the tool that kept failing and its error. It
// wraps [ErrCircuitBreaker].
type CircuitBreakerError struct {
	// Tool is the failing tool's name.
	Tool string
	// Message is the error content the model saw each time.
	Message string
	// Count is how many times in a row it failed so.
	Count int
}

// Error says which tool failed, how often and with what.
func (e *CircuitBreakerError) Error() string {
	return fmt.Sprintf("agentloop: circuit breaker tripped: tool %q failed %d times in a row with the same error: %s", e.Tool, e.Count, e.Message)
}

// Unwrap returns [ErrCircuitBreaker].
func (e *CircuitBreakerError) Unwrap() error { return ErrCircuitBreaker }

// HaltedError reports a tool's request to stop the loop. It wraps
// [ErrHalted] and the tool's error (a *llmtoolkit.HaltError), so both
// errors.Is(err, ErrHalted) and errors.Is(err, llmtoolkit.ErrHalt) hold.
type HaltedError struct {
	// Tool is the name of the tool that asked to stop.
	Tool string
	// Reason is the reason it gave.
	Reason string
	// Err is the tool's error.
	Err error
}

// Error says which tool halted the loop and why.
func (e *HaltedError) Error() string {
	return fmt.Sprintf("agentloop: halted by tool %q: %s", e.Tool, e.Reason)
}

// Unwrap returns [ErrHalted] and the tool's error.
func (e *HaltedError) Unwrap() []error { return []error{ErrHalted, e.Err} }

// LLMError wraps the error of a failed model call.
type LLMError struct {
	// Iteration is the 1-based round in which the call failed.
	Iteration int
	// Err is the SendFunc's error.
	Err error
}

// Error says in which round the model call failed, and why.
func (e *LLMError) Error() string {
	return fmt.Sprintf("agentloop: model call failed in iteration %d: %v", e.Iteration, e.Err)
}

// Unwrap returns the SendFunc's error.
func (e *LLMError) Unwrap() error { return e.Err }

// ErrModelPanic is wrapped by a [*ModelPanicError].
var ErrModelPanic = errors.New("agentloop: the SendFunc panicked")

// ModelPanicError reports a panic inside the [SendFunc]. Run returns it
// wrapped in an [*LLMError] (the model call failed), so the host learns of
// the bug without its program crashing. It wraps [ErrModelPanic].
type ModelPanicError struct {
	// Value is what the SendFunc panicked with.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

// Error returns "agentloop: the SendFunc panicked: VALUE".
func (e *ModelPanicError) Error() string {
	return fmt.Sprintf("%v: %v", ErrModelPanic, e.Value)
}

// Unwrap returns [ErrModelPanic].
func (e *ModelPanicError) Unwrap() error { return ErrModelPanic }

// ErrCallbackPanic is wrapped by a [*CallbackPanicError]: one of the host's
// callbacks in [Options] panicked.
var ErrCallbackPanic = errors.New("agentloop: a callback panicked")

// CallbackPanicError ends a run whose [Options.OnEvent], [Options.OnIteration],
// [Options.Stop] or [Options.Now] panicked, on whatever goroutine: the
// panic fails the run, never the host. It wraps [ErrCallbackPanic].
type CallbackPanicError struct {
	// Callback names the callback: "OnEvent", "OnIteration", "Stop" or
	// "Now".
	Callback string
	// Value is what it panicked with.
	Value any
	// Stack is the stack of the panicking goroutine.
	Stack []byte
}

// Error names the callback and the panic's value.
func (e *CallbackPanicError) Error() string {
	return fmt.Sprintf("agentloop: Options.%s panicked: %v", e.Callback, e.Value)
}

// Unwrap returns [ErrCallbackPanic].
func (e *CallbackPanicError) Unwrap() error { return ErrCallbackPanic }

// ErrExecutor is wrapped by an [*ExecutorError]: the [Executor] failed.
var ErrExecutor = errors.New("agentloop: the executor failed")

// The steps an [ExecutorError] names.
const (
	// StepModel is a model call ([Executor.Model]).
	StepModel = "model"
	// StepTools is a turn's tool calls ([Executor.Tools]).
	StepTools = "tools"
)

// ExecutorError ends a run whose [Options.Executor] failed: the engine
// that runs the steps (its store, its worker), not the model or a tool.
// The history Run returns stays paired: when Tools failed, each call
// without a result is answered with an error result wrapping this error.
// It wraps [ErrExecutor] and the executor's error.
type ExecutorError struct {
	// Step is [StepModel] or [StepTools].
	Step string
	// Iteration is the 1-based iteration of the step.
	Iteration int
	// Err is the executor's error.
	Err error
}

// Error says which step failed, in which iteration, and why.
func (e *ExecutorError) Error() string {
	return fmt.Sprintf("agentloop: the executor failed the %s step of iteration %d: %v", e.Step, e.Iteration, e.Err)
}

// Unwrap returns [ErrExecutor] and the executor's error.
func (e *ExecutorError) Unwrap() []error { return []error{ErrExecutor, e.Err} }
