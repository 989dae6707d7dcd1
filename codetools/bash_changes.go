package codetools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit/internal/snapshot"
)

// maxBashChangedFiles bounds the files a bash call's changes are
// diagnosed for; maxBashWatchEntries bounds the tree watched.
const (
	maxBashChangedFiles = 20
	maxBashWatchEntries = 200_000
)

// bashWatch finds the files a bash command changed, for the language
// servers: the tree's stat index (internal/snapshot) before and after the
// command; only files whose stat moved are read, and a file counts as
// changed when its content hash differs. It is made at the first bash
// call with language servers on.
type bashWatch struct {
	once sync.Once
	eng  *snapshot.Engine
	err  error
}

// watchBash scans the tree before a bash command and returns the function
// that, after it, tells the language servers of the files the command
// changed and returns their diagnostics' lines for bash's answer. Both
// are no-ops when servers are off for bash.
func (c *CodeTools) watchBash(ctx context.Context) func(context.Context) string {
	if c.lsp == nil || c.cfg.lsp.off["bash"] {
		return func(context.Context) string { return "" }
	}
	// Commands running at once each compare their own before and after
	// (the engine scans one at a time): a file another changed meanwhile
	// is told too, which is true of the tree.
	before, err := c.treeFiles(ctx)
	if c.bashWatch.err != nil {
		return func(context.Context) string { return "" }
	}
	if err != nil {
		return func(context.Context) string { return bashWatchNote(err) }
	}
	return func(ctx context.Context) string {
		after, err := c.treeFiles(ctx)
		if err != nil {
			return bashWatchNote(err)
		}
		c.checkServerViews()
		c.serversSeeTree(ctx) // ignored folders too, which after leaves out
		c.serversSeeNew(addedFiles(before, after))
		return c.diagnoseBash(ctx, changedFiles(before, after, boundExclusionsOf(ctx)))
	}
}

// addedFiles lists the files present after and not before.
func addedFiles(before, after map[string]snapshot.Hash) []string {
	var out []string
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

func bashWatchNote(err error) string {
	if errors.Is(err, snapshot.ErrTooLarge) {
		return "\n\n(No diagnostics for the files the command changed: the tree is too large to tell which.)"
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ""
	}
	return fmt.Sprintf("\n\n(No diagnostics for the files the command changed: %v.)", err)
}

// changedFiles lists, sorted, the files present after whose content
// differs from before (added or modified), leaving out what the host
// excludes.
func changedFiles(before, after map[string]snapshot.Hash, ex *exclusions) []string {
	var out []string
	for p, h := range after {
		if old, ok := before[p]; (!ok || old != h) && !ex.excluded(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// diagnoseBash tells the servers the new text of each changed file they
// handle and returns the diagnostics' lines, within one settle time for
// all, at most maxBashChangedFiles files.
func (c *CodeTools) diagnoseBash(ctx context.Context, files []string) string {
	sctx, cancel := context.WithTimeout(ctx, c.cfg.lsp.limits.Settle)
	defer cancel()
	var b strings.Builder
	n := 0
	for _, rel := range files {
		if !c.lsp.Handles(filepath.Join(c.dir, filepath.FromSlash(rel))) {
			continue
		}
		if n == maxBashChangedFiles {
			fmt.Fprintf(&b, "\n\n(More files the command changed were not diagnosed: %d at most.)", maxBashChangedFiles)
			break
		}
		data, err := c.readForServer(filepath.Join(c.dir, filepath.FromSlash(rel)))
		if err != nil {
			continue // not a text file within the edit size, or gone again
		}
		n++
		_, lines := c.afterChange(sctx, "bash", filepath.FromSlash(rel), string(data))
		b.WriteString(lines)
	}
	return b.String()
}
