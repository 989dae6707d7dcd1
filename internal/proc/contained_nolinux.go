//go:build !linux

package proc

import "github.com/llmtoolkit/llmtoolkit/internal/sandbox"

// newContainedGuard is never called here: no command is contained on this
// system (sandbox.Cmd.Contained is false).
func newContainedGuard(*sandbox.Cmd) Guard { return nil }
