package codetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/patch"
)

// WithApplyPatch adds the apply_patch tool (a 13th tool, off by default so
// that the default set stays the 12 every host has): a patch in the V4A
// format OpenAI's models write (openai/codex's apply_patch), which adds,
// deletes, updates and moves several files at once, all or nothing. It is
// the function-tool form for any model; package provider offers the same
// engine in the Responses API's native apply_patch shape.
func WithApplyPatch() Option { return func(c *config) { c.applyPatch = true } }

// Caps of apply_patch's answer and Display.
const (
	maxPatchFilesShown = 50 // files whose diff the answer and the Display hold
)

func (c *CodeTools) applyPatchSpec() toolSpec {
	s := makeSpec("apply_patch",
		"Apply a patch that adds, deletes, updates or moves files, all or nothing: if any part fails, no file is changed and the error names the operation, the hunk and its line. Format:\n"+
			"*** Begin Patch\n"+
			"*** Add File: path/new.txt\n+each line of the new file starts with +\n"+
			"*** Delete File: path/old.txt\n"+
			"*** Update File: path/file.go\n*** Move to: path/renamed.go   (optional)\n"+
			"@@ a line above the change, to find the right place (optional)\n"+
			" context line (starts with a space)\n-removed line\n+added line\n"+
			"*** End Patch\n"+
			"Give about 3 lines of context before and after each change; a hunk whose context occurs several times applies at the first occurrence after the previous hunk, so add an @@ line to pick another. "+
			"Context is matched exactly, then ignoring trailing whitespace, then ignoring surrounding whitespace. End a hunk with '*** End of File' when it ends the file. "+
			"Line endings (LF or CRLF) and a byte order mark are kept. Paths are relative to the working directory. Returns the files changed and their diffs.",
		schemaObject(map[string]any{
			"patch": map[string]any{"type": "string", "minLength": 1, "description": "The whole patch, from '*** Begin Patch' to '*** End Patch'."},
		}, "patch"),
		llmtoolkit.Annotations{Destructive: true}, c.applyPatch)
	if c.cfg.nativeOpenAI {
		s.tool.Native = NativeApplyPatch
	}
	return s
}

// applyPatchPathFact declares every file a patch touches: a patch that
// changes three files is three paths, a move is its old and its new path.
func (c *CodeTools) applyPatchPathFact() *llmtoolkit.PathArguments {
	return &llmtoolkit.PathArguments{
		Lists: []string{"patch"},
		List: func(ctx context.Context, _, value string) ([]string, error) {
			ops, err := patch.Parse(value)
			if err != nil {
				return nil, err
			}
			paths, err := c.patchPaths(ctx, ops)
			for i, p := range paths {
				paths[i] = filepath.ToSlash(p)
			}
			return paths, err
		},
	}
}

// patchPaths lists the canonical paths ops touch, each once, sorted.
func (c *CodeTools) patchPaths(ctx context.Context, ops []patch.Op) ([]string, error) {
	seen := map[string]bool{}
	for _, op := range ops {
		for _, p := range []string{op.Path, op.MoveTo} {
			if p == "" {
				continue
			}
			rel, err := c.writeTarget(ctx, p)
			if err != nil {
				return nil, err
			}
			seen[rel] = true
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for p := range seen {
			if !yield(p) {
				return
			}
		}
	}), nil
}

func (c *CodeTools) applyPatch(ctx context.Context, args map[string]any) (string, error) {
	ops, err := patch.Parse(stringArg(args, "patch", ""))
	if err != nil {
		return "", err
	}
	changes, err := c.runPatch(ctx, ops)
	if err != nil {
		return "", fmt.Errorf("the patch was not applied, no file changed: %w", err)
	}
	return c.reportPatch(ctx, changes) + c.diagnosePatch(ctx, changes), nil
}

// diagnosePatch reports the diagnostics of the files a patch added or
// changed (WithLanguageServers), within one settle time for all of them.
func (c *CodeTools) diagnosePatch(ctx context.Context, changes []patch.Change) string {
	if c.lsp == nil || c.cfg.lsp.off["apply_patch"] {
		return ""
	}
	sctx, cancel := context.WithTimeout(ctx, c.cfg.lsp.limits.Settle)
	defer cancel()
	var b strings.Builder
	for _, ch := range changes {
		if ch.Kind == patch.Delete {
			continue
		}
		rel := ch.Path
		if ch.MoveTo != "" {
			rel = ch.MoveTo
		}
		_, lines := c.afterChange(sctx, "apply_patch", rel, ch.After)
		b.WriteString(lines)
	}
	return b.String()
}

// runPatch applies ops, all or nothing, holding the lock of every path they
// touch (taken in sorted order, so two patches never deadlock).
func (c *CodeTools) runPatch(ctx context.Context, ops []patch.Op) ([]patch.Change, error) {
	paths, err := c.patchPaths(ctx, ops)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		defer c.locks.lock(p)()
	}
	return patch.Apply(ctx, patchFiles{c}, ops)
}

// reportPatch attaches the "patch" Display and returns the answer: one line
// per file, then the diffs.
func (c *CodeTools) reportPatch(ctx context.Context, changes []patch.Change) string {
	var list, diffs strings.Builder
	payload := PatchPayload{Files: []PatchFile{}}
	for i, ch := range changes {
		shown := shownPath(ch.Path)
		file := PatchFile{Path: shown}
		switch {
		case ch.Kind == patch.Add:
			file.Operation = "add"
			fmt.Fprintf(&list, "A %s\n", shown)
		case ch.Kind == patch.Delete:
			file.Operation = "delete"
			fmt.Fprintf(&list, "D %s\n", shown)
		case ch.MoveTo != "":
			file.Operation, file.MovedFrom, file.Path = "move", shown, shownPath(ch.MoveTo)
			fmt.Fprintf(&list, "R %s -> %s\n", shown, file.Path)
		default:
			file.Operation = "update"
			fmt.Fprintf(&list, "M %s\n", shown)
		}
		if i >= maxPatchFilesShown {
			payload.Omitted++
			continue
		}
		d := newTextDiff(ch.Before, ch.After, c.cfg.diffContext)
		dp := d.payload(file.Path, c.cfg.diffContext)
		file.Diff, file.Truncated, file.Added, file.Removed = dp.Diff, dp.Truncated, dp.Added, dp.Removed
		payload.Files = append(payload.Files, file)
		if ch.Kind == patch.Update {
			fmt.Fprintf(&diffs, "\n%s:\n%s\n", file.Path, d.compact(c.cfg.diffContext, c.cfg.diffMaxLines))
		}
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayPatch, Payload: payload})
	noun := "files"
	if len(changes) == 1 {
		noun = "file"
	}
	out := fmt.Sprintf("Applied the patch: %d %s changed.\n%s", len(changes), noun, list.String())
	if payload.Omitted > 0 {
		out += fmt.Sprintf("(the diffs of the last %d operations are not shown)\n", payload.Omitted)
	}
	return strings.TrimSuffix(out+diffs.String(), "\n")
}

// patchFiles is the engine's file system: codetools' paths, checks and
// atomic writes.
type patchFiles struct{ c *CodeTools }

func (f patchFiles) Resolve(ctx context.Context, p string) (string, error) {
	return f.c.writeTarget(ctx, p)
}

func (f patchFiles) Load(ctx context.Context, p, rel string) (string, fs.FileMode, error) {
	if _, err := f.c.root.Lstat(rel); errors.Is(err, fs.ErrNotExist) {
		return "", 0, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	content, info, err := f.c.loadText(ctx, p, rel)
	if err != nil {
		return "", 0, err
	}
	return content, info.Mode().Perm(), nil
}

func (f patchFiles) Write(_ context.Context, p, rel, content string, perm fs.FileMode) ([]string, error) {
	created, err := patch.MakeParents(f.c.root, rel)
	if err != nil {
		if confine.IsEscape(err) {
			return created, f.c.conf.OutsideError(p)
		}
		return created, fmt.Errorf("create the folders of %s: %w", p, err)
	}
	return created, f.c.writeAtomicMode(p, rel, content, perm)
}

func (f patchFiles) Remove(_ context.Context, p, rel string) error {
	if err := f.c.root.Remove(rel); err != nil {
		return f.c.conf.FileError(p, err)
	}
	return nil
}

var _ patch.Files = patchFiles{}
