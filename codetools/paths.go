package codetools

// How the tools turn a path argument into the path they open and the path
// they declare ([llmtoolkit.Tool.Paths]): one canonical function per kind of
// argument, over internal/confine, shared by the check and the open.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

// ErrOutsideRoot is wrapped by the error for a path that leaves the root.
var ErrOutsideRoot = errors.New("outside the working directory")

// canonical is the one function that turns a path argument into the path
// a tool opens (internal/confine: the path confined to the root, its links
// inside the root followed, a link out refused). The tools open what it
// returns, and their definitions declare it ([llmtoolkit.Tool.Paths]) so
// that a permission layer checks the same path: the two cannot disagree.
func (c *CodeTools) canonical(ctx context.Context, arg, p string, allowEmpty bool) (string, error) {
	return c.conf.Canonical(ctx, arg, p, allowEmpty)
}

// pathFact declares the tool's "path" argument with the function the tool
// opens it with.
func pathFact(canon func(ctx context.Context, p string) (string, error)) *llmtoolkit.PathArguments {
	return &llmtoolkit.PathArguments{
		Names: []string{"path"},
		Canonical: func(ctx context.Context, _, value string) (string, error) {
			r, err := canon(ctx, value)
			return filepath.ToSlash(r), err
		},
	}
}

// readPathFact is pathFact for the tools that read what path names;
// allowEmpty says whether an empty path means the root.
func (c *CodeTools) readPathFact(allowEmpty bool) *llmtoolkit.PathArguments {
	return pathFact(func(ctx context.Context, p string) (string, error) {
		return c.canonical(ctx, "path", p, allowEmpty)
	})
}

// writeTarget confines a write tool's path argument and follows its
// symbolic links inside the root ([CodeTools.canonical]), so that writes
// replace the file a link points to and two names of one file share one
// lock; it refuses the root itself and a path written as a folder. It is
// the canonical function the write tools declare ([CodeTools.writePathFact]).
func (c *CodeTools) writeTarget(ctx context.Context, p string) (string, error) {
	real, err := c.canonical(ctx, "path", p, false)
	if err != nil {
		return "", err
	}
	if real == "." {
		return "", fmt.Errorf("%s is the working directory itself, not a file", p)
	}
	if end, ok := folderEnding(p); ok {
		return "", fmt.Errorf("path %q names a folder (it ends with %q), not a file; give the file's path, without the trailing %q", p, end, end)
	}
	return real, nil
}

// writePathFact declares the write tools' "path" argument with writeTarget.
func (c *CodeTools) writePathFact() *llmtoolkit.PathArguments {
	return pathFact(func(ctx context.Context, p string) (string, error) { return c.writeTarget(ctx, p) })
}

// folderEnding reports whether p, as written, can only name a folder: it
// ends with a separator, or its last element is "." or "..". It returns
// that ending.
func folderEnding(p string) (string, bool) {
	native := filepath.FromSlash(p)
	if strings.HasSuffix(native, string(filepath.Separator)) {
		return p[len(p)-1:], true
	}
	switch filepath.Base(native) {
	case ".", "..":
		return filepath.Base(native), true
	}
	return "", false
}

// startPoint resolves a path argument to where a walk starts: the clean
// relative path and whether it is a folder. A missing path, or one that a
// symbolic link leads outside the root (an error wrapping [ErrOutsideRoot]),
// is an error that names the argument.
func (c *CodeTools) startPoint(ctx context.Context, arg, p string) (rel string, info fs.FileInfo, err error) {
	rel, err = c.canonical(ctx, arg, p, true)
	if err != nil {
		return "", nil, err
	}
	info, err = c.root.Stat(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, fmt.Errorf("%s %q does not exist: %w", arg, p, err)
		}
		if confine.IsEscape(err) {
			return "", nil, fmt.Errorf("%s %q is %w (through a symbolic link)", arg, p, ErrOutsideRoot)
		}
		return "", nil, fmt.Errorf("%s %q: %w", arg, p, err)
	}
	return rel, info, nil
}
