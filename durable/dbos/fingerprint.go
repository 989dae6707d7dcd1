package dbos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	transact "github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// ErrAgentChanged is wrapped, with transact.ErrStepNondeterminism, by the
// error of a run resumed by an agent other than the one it started with:
// the [AgentFunc] built, for the resumed attempt, tools (names, parameter
// schemas, annotations, sensitive fields, path arguments, recipes), a
// system prompt or loop options (MaxIterations, MaxToolCalls,
// MaxTurnResultBytes, BreakerThreshold, whether Options.Tools narrows the
// list, whether a Stop hook is set, the context budget and policy as
// agentloop.ContextFingerprint hashes them: another budget, thresholds,
// spill size, or a summarizer set or unset; another summarizer function
// is not seen) other than those of its first attempt. A policy cleared,
// compacted or spilled the recorded history at its thresholds: replayed
// under another, the run would clear and compact otherwise than it did.
// The recorded steps were answers to the first agent: replaying them into
// another would run its tools on calls written for others. The run stops,
// with its status ERROR, before its first step is replayed; [Engine.Result]
// returns the error from any process.
var ErrAgentChanged = errors.New("durable/dbos: the run was resumed by another agent than the one it started with")

// fingerprintStep is the name of a run's first step, which records the
// fingerprint of its agent.
const fingerprintStep = "agent/fingerprint"

// agentPrint is what a run's fingerprint is the hash of.
type agentPrint struct {
	Tools              []string `json:"tools"` // agentloop.ToolFingerprint of each tool, sorted
	System             []string `json:"system,omitempty"`
	MaxIterations      int      `json:"max_iterations"`
	MaxToolCalls       int      `json:"max_tool_calls"`
	MaxTurnResultBytes int      `json:"max_turn_result_bytes"`
	BreakerThreshold   int      `json:"breaker_threshold"`
	Narrowed           bool     `json:"narrowed,omitempty"` // Options.Tools set
	Stop               bool     `json:"stop,omitempty"`
	// Context is agentloop.ContextFingerprint of the options: "" (left
	// out, so the hash of an agent without a policy is what it was before
	// the policy counted) without a budget and without spilling.
	Context string `json:"context,omitempty"`
}

// fingerprint returns the hash of the agent a run's attempt built: its
// tools (Options.Tools, or the Resolver's list at the start, each by
// agentloop.ToolFingerprint), the system messages of its input and the
// loop options that change what the recorded steps mean, its context
// policy among them (agentloop.ContextFingerprint). The agent built
// for the same run gives the same hash.
func fingerprint(in Input, opts agentloop.Options) (fp string, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("listing the agent's tools panicked: %v", v)
		}
	}()
	p := agentPrint{
		MaxIterations: opts.MaxIterations, MaxToolCalls: opts.MaxToolCalls,
		MaxTurnResultBytes: opts.MaxTurnResultBytes, BreakerThreshold: opts.BreakerThreshold,
		Narrowed: opts.Tools != nil, Stop: opts.Stop != nil,
		Context: agentloop.ContextFingerprint(opts),
	}
	tools := opts.Tools
	if tools == nil && opts.Resolver != nil {
		tools = opts.Resolver.Tools()
	}
	for _, t := range tools {
		tp, err := agentloop.ToolFingerprint(t)
		if err != nil {
			return "", err
		}
		p.Tools = append(p.Tools, tp)
	}
	slices.Sort(p.Tools)
	for _, m := range in.Messages {
		if m.Role == agentloop.RoleSystem {
			p.System = append(p.System, m.Content)
		}
	}
	data, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// checkAgent records the fingerprint of the agent of the run's first
// attempt as the run's first step, and compares the agent of a resumed
// attempt with it: another agent stops the run with an error that wraps
// transact.ErrStepNondeterminism (a *transact.Error, which DBOS keeps as it
// is, so [Engine.Result] sees it in any process).
func (e *Engine) checkAgent(wf transact.Context, id string, in Input, opts agentloop.Options) error {
	fp, err := fingerprint(in, opts)
	if err != nil {
		return fmt.Errorf("durable/dbos: building the agent of run %q: %w", id, err)
	}
	recorded, err := transact.RunAsStep(wf, func(context.Context) (string, error) { return fp, nil }, transact.WithStepName(fingerprintStep))
	if err != nil {
		return fmt.Errorf("%w: step %s: %w", ErrEngine, fingerprintStep, err)
	}
	if recorded == fp {
		return nil
	}
	return &transact.Error{
		Code:       transact.ErrorCodeStepNondeterminism,
		WorkflowID: id,
		StepName:   fingerprintStep,
		Message: fmt.Sprintf("%s: run %q started with agent %.12s and was resumed with agent %.12s "+
			"(its tools, their schemas or facts, the system prompt, the loop options or the context policy differ); "+
			"resume it with the agent it started with, or start a new run", ErrAgentChanged, id, recorded, fp),
	}
}

// runError is the error of a run that ended with err (DBOS's, or the
// engine's): it wraps ErrEngine, and ErrAgentChanged when the run's agent
// changed (checkAgent), also when err was read back from the database.
func runError(id string, err error) error {
	var te *transact.Error
	if errors.As(err, &te) && te.Code == transact.ErrorCodeStepNondeterminism && te.StepName == fingerprintStep {
		return fmt.Errorf("%w: %w: run %q: %w", ErrEngine, ErrAgentChanged, id, err)
	}
	return fmt.Errorf("%w: run %q: %w", ErrEngine, id, err)
}
