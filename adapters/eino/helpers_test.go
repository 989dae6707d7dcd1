package eino_test

import (
	"context"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
)

// staticResolver lists its tools and answers every call with the call's name.
type staticResolver []llmtoolkit.Tool

func (s staticResolver) Tools() []llmtoolkit.Tool { return s }

func (s staticResolver) Resolve(_ context.Context, call llmtoolkit.Call) (string, error) {
	for _, t := range s {
		if t.Name == call.Name {
			return "ran " + call.Name, nil
		}
	}
	return "", fmt.Errorf("%w: %q", llmtoolkit.ErrUnknownTool, call.Name)
}

// recordingResolver hands every call it resolves to fn.
type recordingResolver struct {
	tools []llmtoolkit.Tool
	fn    func(llmtoolkit.Call)
}

func (r recordingResolver) Tools() []llmtoolkit.Tool { return r.tools }

func (r recordingResolver) Resolve(_ context.Context, call llmtoolkit.Call) (string, error) {
	r.fn(call)
	return "ok", nil
}
