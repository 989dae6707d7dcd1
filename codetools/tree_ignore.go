package codetools

import (
	"context"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit/internal/gitignore"
)

// ignoreState holds the .gitignore rules in force in one folder of a tree
// walk. Paths are slash-separated and relative to the root of the tools,
// so the .gitignore files of the folders above the walk's top apply too.
// The files are read as every walk reads them (ignore_files.go).
type ignoreState struct {
	m *gitignore.Matcher
}

// treeIgnore returns the rules in force in the folder rel: the .gitignore
// files of the root and of every folder down to rel. A .gitignore that
// cannot be read (a link, a pipe, a folder) is skipped with a logged event,
// and those below it still apply.
func (c *CodeTools) treeIgnore(ctx context.Context, rel string) (*ignoreState, error) {
	m, err := c.ignoreAbove(ctx, ignorePath(rel))
	if err != nil {
		return nil, err
	}
	return &ignoreState{m: m}, nil
}

// ignored reports whether the entry at rel (relative to the root) is
// skipped.
func (s *ignoreState) ignored(rel string, isDir bool) bool {
	return s.m.Ignored(ignorePath(rel), isDir)
}

// child returns the rules in force in the folder rel, below s's.
func (s *ignoreState) child(c *CodeTools, rel string) (*ignoreState, error) {
	m, err := gitignore.LoadDir(c.readIgnoreFile, ignorePath(rel), s.m)
	logIgnoreProblem(err)
	if m == s.m {
		return s, nil
	}
	return &ignoreState{m: m}, nil
}

// ignorePath turns a root-relative path into the matcher's form.
func ignorePath(rel string) string {
	if rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}
