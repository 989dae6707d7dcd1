package codetools

import "github.com/llmtoolkit/llmtoolkit/internal/textedit"

// maxDisplayDiffBytes caps the unified diff a "diff" Display carries.
const maxDisplayDiffBytes = 64 << 10

// textDiff is an edit's line diff (see internal/textedit), computed once
// for the compact diff the model reads and the "diff" Display a host shows.
type textDiff struct{ *textedit.Diff }

// newTextDiff diffs before and after, keeping context lines around each
// change.
func newTextDiff(before, after string, context int) *textDiff {
	return &textDiff{textedit.NewDiff(before, after, context)}
}

// compact is the compact diff the model reads, at most maxLines lines.
func (d *textDiff) compact(context, maxLines int) string { return d.Compact(context, maxLines) }

// payload is the payload of the "diff" Display an edit shows: the
// path, a unified diff of at most maxDisplayDiffBytes bytes (Truncated
// says whether it was cut), the counts of lines removed and added, and
// the first changed line. It never holds the whole texts. The caller sets
// Replacements.
func (d *textDiff) payload(path string, context int) DiffPayload {
	diff, truncated := d.Unified(path, context, maxDisplayDiffBytes)
	removed, added, bounded := d.Counts()
	return DiffPayload{
		Path: path, Diff: diff, Truncated: truncated,
		Added: added, Removed: removed, CountsBounded: bounded, FirstChangedLine: d.FirstChanged(),
	}
}
