package llmtoolkit

import (
	"context"
	"slices"
)

// PathArguments is a tool's declaration of its path arguments (see
// [Tool.Paths]): which arguments name files, and the function that turns
// such a value into the file the tool will open. A tool that declares its
// paths must use Canonical itself when it opens them, so that a check made
// on Canonical's answer holds for what the tool does, whatever the
// spelling (absolute, "..", "//", a trailing slash, a symbolic link).
type PathArguments struct {
	// Names lists the top-level arguments whose string values are paths.
	Names []string
	// Canonical returns the path the tool opens for value, the value of
	// argument name: slash-separated, relative to the tool's root ("." for
	// the root itself), with "." and ".." steps, repeated and trailing
	// slashes cleaned and symbolic links inside the root followed to their
	// target (the part that does not exist yet kept as written). It returns
	// an error, naming the argument, for a value the tool would refuse (a
	// path outside its root, directly or through a link). It must be safe
	// for concurrent use and honour ctx's deadline.
	Canonical func(ctx context.Context, name, value string) (string, error)
	// Lists names the top-level arguments whose string values name
	// several paths (a patch that touches several files).
	Lists []string
	// List returns the canonical paths (as Canonical returns them) that a
	// value of argument name, one of Lists, names: every file the tool
	// would read, write or remove for it. It returns an error, naming the
	// argument, for a value the tool would refuse.
	List func(ctx context.Context, name, value string) ([]string, error)
}

// Declares reports whether name is one of the path arguments p declares
// (in Names or in Lists); a nil p declares none.
func (p *PathArguments) Declares(name string) bool {
	if p == nil {
		return false
	}
	if p.Canonical != nil && slices.Contains(p.Names, name) {
		return true
	}
	return p.List != nil && slices.Contains(p.Lists, name)
}

// ArgumentPath is one canonical path a call names: the argument that names
// it and the path as [PathArguments.Canonical] or [PathArguments.List]
// returns it.
type ArgumentPath struct {
	// Argument is the argument's name.
	Argument string
	// Path is the canonical path.
	Path string
	// Listed reports that the argument is one of Lists (it names several
	// paths, a patch's files).
	Listed bool
}

// Resolve returns the canonical paths a call with args names, the one
// reading of the declaration the permission checks (package agent) and the
// audit trail (package trace) share: each string argument of Names, then
// each of Lists, in their order. A value the tool would refuse is an error
// naming its argument ("argument path: ..."). A nil p declares none.
func (p *PathArguments) Resolve(ctx context.Context, args map[string]any) ([]ArgumentPath, error) {
	if p == nil {
		return nil, nil
	}
	var out []ArgumentPath
	if p.Canonical != nil {
		for _, name := range p.Names {
			v, ok := args[name].(string)
			if !ok {
				continue
			}
			cp, err := p.Canonical(ctx, name, v)
			if err != nil {
				return nil, &PathArgumentError{Argument: name, Err: err}
			}
			out = append(out, ArgumentPath{Argument: name, Path: cp})
		}
	}
	if p.List != nil {
		for _, name := range p.Lists {
			v, ok := args[name].(string)
			if !ok {
				continue
			}
			cps, err := p.List(ctx, name, v)
			if err != nil {
				return nil, &PathArgumentError{Argument: name, Err: err}
			}
			for _, cp := range cps {
				out = append(out, ArgumentPath{Argument: name, Path: cp, Listed: true})
			}
		}
	}
	return out, nil
}

// PathArgumentError is [PathArguments.Resolve]'s error: the argument
// whose value the tool would refuse, and why.
type PathArgumentError struct {
	Argument string
	Err      error
}

// Error names the argument and the reason.
func (e *PathArgumentError) Error() string { return "argument " + e.Argument + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *PathArgumentError) Unwrap() error { return e.Err }
