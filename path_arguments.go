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
