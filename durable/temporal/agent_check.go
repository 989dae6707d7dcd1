package temporal

import (
	"errors"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	sdktemporal "go.temporal.io/sdk/temporal"
)

// ErrAgentChanged is wrapped by the error of a run whose tool call reached
// a worker whose tools are not those the call was written for: the tool
// the model was offered when it wrote the call (its name, parameter schema
// and facts, as agentloop.ToolFingerprint hashes them) is missing on that
// worker, or defined otherwise (the run moved to a worker of another
// deployment, or resumed there after a crash). Running the recorded call
// with another tool would give a wrong answer: the call does not run and
// the run fails with an application error of type [AgentChangedType]
// (non-retryable) whose message holds ErrAgentChanged's.
var ErrAgentChanged = errors.New("llmtoolkit: the run's tool call reached a worker with other tools than those the call was written for")

// AgentChangedType is the type of the application error a run fails with
// when its agent changed ([ErrAgentChanged]): client code tells it with
// errors.As(err, &appErr) && appErr.Type() == AgentChangedType.
const AgentChangedType = "llmtoolkit.AgentChanged"

// ModelResult is what the model activity returns: the model call's outcome
// and the fingerprints (agentloop.ToolFingerprint) of the tools the worker
// offered with it, by name. The workflow passes each call's fingerprint to
// its tool activity, which refuses the call on a worker whose tool is
// missing or defined otherwise ([ErrAgentChanged]). A result recorded
// before Tools existed decodes with none: its calls are not checked.
type ModelResult struct {
	agentloop.ModelOutcome
	// Tools are the fingerprints of the tools offered with the call.
	Tools map[string]string `json:"tools,omitempty"`
}

// toolPrints returns the name and fingerprint of each of tools, or nil
// when one has no JSON form (then nothing is checked).
func toolPrints(tools []llmtoolkit.Tool) map[string]string {
	prints := make(map[string]string, len(tools))
	for _, t := range tools {
		fp, err := agentloop.ToolFingerprint(t)
		if err != nil {
			return nil
		}
		prints[t.Name] = fp
	}
	return prints
}

// checkTool refuses call on this worker when the model wrote it for
// another definition of its tool (want, the fingerprint of the tool the
// model was offered; "" when none was recorded: no check). A panic of the
// Resolver's Tools fails the attempt.
func (a *Activities) checkTool(call llmtoolkit.Call, want string) (err error) {
	if want == "" {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("listing the worker's tools panicked: %v", v)
		}
	}()
	got, ok := toolPrints(a.tools())[call.Name]
	switch {
	case got == want:
		return nil
	case !ok:
		err = fmt.Errorf("%w: tool %q is not on this worker", ErrAgentChanged, call.Name)
	default:
		err = fmt.Errorf("%w: tool %q is defined otherwise on this worker (its schema or facts differ)", ErrAgentChanged, call.Name)
	}
	return sdktemporal.NewNonRetryableApplicationError(err.Error(), AgentChangedType, nil)
}

// isAgentChanged reports an activity failure for [ErrAgentChanged].
func isAgentChanged(err error) bool {
	var appErr *sdktemporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == AgentChangedType
}
