package llmtoolkit

import "context"

// ValidateCall makes the check [Execute] makes of call before running
// tool: a null for an optional parameter whose schema does not accept it
// counts as absent, then the arguments are validated against the tool's
// schema. It returns the call as Execute would run it, or the error
// (wrapping [ErrInvalidArguments], [ErrSchemaTooComplex], ctx's error, or
// a [*PanicError] of the validator) whose text Execute would give the
// model. A host that stores a call to run it later (an MCP task) checks
// it with this first, so that nothing is stored for a call that would be
// refused.
func ValidateCall(ctx context.Context, tool Tool, call Call) (Call, error) {
	if call.Arguments == nil {
		call.Arguments = map[string]any{}
	}
	if call.Malformed != nil {
		return call, malformedError(call)
	}
	call, res, refused := admit(ctx, tool, call)
	if refused {
		return call, res.Err
	}
	return call, nil
}
