//go:build !linux

package codetools

import "github.com/llmtoolkit/llmtoolkit/internal/sandbox"

// newContainedGuard is never called here: no command is contained on this
// system (sandbox.Cmd.Contained is false).
func newContainedGuard(*sandbox.Cmd) callGuard { return nil }
