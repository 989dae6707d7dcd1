// Package textedit is the engine of codetools' edit tools (edit_file,
// multi_edit, and write_file's diff): it finds the text an edit replaces,
// says what is closest when nothing matches, and diffs the result. The
// tools (their schemas, messages, Display payloads and file writes) stay in
// codetools.
//
// # Matching
//
// [Apply] replaces the one region of a file that oldText designates. The
// file's text is matched in two spaces:
//
//   - the exact space: the file without its UTF-8 BOM and with "\r\n" as
//     "\n" (the model writes LF); a match there never splits a character
//     (a letter from its combining marks, a joined emoji);
//   - the tolerant space, tried only when the exact one has no match: the
//     exact text under Unicode NFKC, with typographic quotes as ASCII
//     quotes, Unicode dashes as "-", special spaces as " ", and the
//     whitespace at the end of each line dropped.
//
// Each space keeps a map back to byte offsets of the file, so only the
// matched region is replaced and every other byte stays as it was; the new
// text is written in the file's line endings ([Styled]) and the BOM is
// kept. Several matches fail with an [*AmbiguousError], none with
// [ErrNoMatch], a replacement that changes nothing with [ErrNoChange].
//
// # Hints
//
// [ClosestLines] says, for an oldText that matched nothing, which lines of
// the file come closest (by shared character bigrams of the tolerant
// form). Its work is bounded whatever the sizes: it compares the first
// lines of oldText with a bounded window of the file, each line cut, and
// gives no hint for an oldText over 1 MiB; memory is a fixed index plus
// one line's grams at a time. It stops when its context ends.
//
// # Diffs
//
// [NewDiff] diffs two texts once, splitting only the lines of the window
// around the change (the common prefix and suffix are skipped in blocks).
// The line diff is Myers' algorithm, which gives up minimality past 2,000
// edits; [Diff.Counts] still gives a minimal diff's counts (as diff -u
// counts) through a linear-space count bounded in work, and says when even
// that gave up. [Diff.Compact] renders the numbered hunks the model reads,
// capped in lines; [Diff.Unified] the unified diff a host shows, capped in
// bytes and cut at a character boundary, never holding the whole texts.
package textedit
