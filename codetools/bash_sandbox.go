package codetools

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"

	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// sandboxState is how bash runs its commands: the backend and policy of
// WithSandbox, or only containment.
type sandboxState struct {
	backend sandbox.Backend // nil: no sandbox (commands only contained)
	policy  sandbox.Policy
	tmp     string // the commands' private temporary folder; "" without a sandbox
	missing string // why the sandbox asked for could not run; "" otherwise
}

// setupSandbox picks the backend of WithSandbox and makes the private
// temporary folder. It fails when WithSandboxRequired is set and the sandbox
// cannot run; otherwise an unavailable sandbox is logged and kept in
// missing, which bash's description and Display show.
func (c *CodeTools) setupSandbox() error {
	p := c.cfg.bash
	if p.sandbox.Mode == SandboxOff {
		if p.requireSandbox {
			return fmt.Errorf("codetools: %w: %w", ErrSandboxUnavailable, errNoSandboxAsked)
		}
		return nil
	}
	b, err := sandbox.ByName(p.sandbox.Backend)
	if err != nil {
		if p.requireSandbox || errors.Is(err, sandbox.ErrBadPolicy) {
			return fmt.Errorf("codetools: WithSandbox: %w", err)
		}
		c.sbx.missing = err.Error()
		slog.Warn("codetools: bash runs commands without the sandbox asked for", slog.String("reason", err.Error()))
		return nil
	}
	tmp, err := os.MkdirTemp("", "llmtoolkit-sandbox-*")
	if err != nil {
		return fmt.Errorf("codetools: sandbox temporary folder: %w", err)
	}
	c.sbx = sandboxState{backend: b, tmp: tmp, policy: sandbox.Policy{
		Mode: p.sandbox.Mode, Network: p.sandbox.Network, Root: c.dir, Tmp: tmp, Readable: p.sandbox.Readable,
	}}
	if p.spillDir == "" {
		c.cfg.bash.spillDir = tmp // where the commands can read them
	}
	return nil
}

// closeSandbox removes the private temporary folder.
func (c *CodeTools) closeSandbox() error {
	if c.sbx.tmp == "" {
		return nil
	}
	if err := os.RemoveAll(c.sbx.tmp); err != nil {
		return fmt.Errorf("codetools: sandbox temporary folder: %w", err)
	}
	return nil
}

// sandboxName says how commands run, for the Display and the description.
func (c *CodeTools) sandboxName() string {
	switch {
	case c.sbx.backend != nil:
		net := "no network"
		if c.sbx.policy.Network {
			net = "network"
		}
		return fmt.Sprintf("%s (%s, %s)", c.sbx.backend.Name(), c.sbx.policy.Mode, net)
	case c.sbx.missing != "":
		return "none: " + c.sbx.missing
	}
	return "none"
}

// bashCommand prepares the shell running command: in the sandbox, or
// contained in a PID namespace, or (where neither works) as a plain
// process that the process guard's scan watches.
func (c *CodeTools) bashCommand(command string) (*sandbox.Cmd, error) {
	spec := sandbox.Spec{Path: c.shellPath(), Args: []string{"-c", command}, Dir: c.dir, Env: c.bashEnv()}
	if c.sbx.backend != nil {
		return c.sbx.backend.Command(spec, c.sbx.policy)
	}
	if b := sandbox.Contain(); b != nil && !c.cfg.bash.noContain {
		return b.Command(spec, sandbox.Policy{})
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir, cmd.Env = spec.Dir, spec.Env
	return &sandbox.Cmd{Cmd: cmd}, nil
}
