// Package patch is the engine of the apply_patch tools: a parser and an
// applier of the V4A patch format that OpenAI's models write (openai/codex's
// apply_patch, the Responses API's apply_patch tool), all-or-nothing across
// the files of a patch.
//
// # The format
//
//	*** Begin Patch
//	*** Add File: path        then the new file's lines, each starting with "+"
//	*** Delete File: path     no lines
//	*** Update File: path
//	*** Move to: new/path     optional, right after Update File
//	@@ anchor line            optional, repeated: the hunk is sought after it
//	 context / -removed / +added lines
//	*** End of File           optional: the hunk's context ends the file
//	*** End Patch
//
// Parse reads a whole patch into Ops; ParseDiff reads one file's update
// without headers and ParseCreate one created file's lines (the diff of a
// Responses API operation). ApplyHunks applies an update to a text, as the
// reference appliers match (see its doc): first match after the cursor,
// exact, then without trailing whitespace, then trimmed; the file's line
// endings and BOM kept; every failure a *HunkError naming the file, the
// hunk and its patch line.
//
// # All or nothing
//
// Prepare resolves every path through Files (codetools: confined to the
// root, links followed) and works the whole patch out in memory, each
// operation on what the earlier ones left; it writes nothing, so a patch
// refused is a patch that changed nothing. Plan.Commit then writes each
// file that ends with content atomically (internal/atomicfile, through
// Files) and removes the deleted ones last; a step that fails undoes the
// steps done, in reverse, files and folders made, and says so
// (ErrRolledBack). Refused: an added file or a move's destination that
// exists (unless deleted earlier in the patch), a deleted or updated file
// that is missing or not a regular text file (a folder), an anchor that is
// in no line of the file, context not found, hunks that overlap.
//
// # Where it departs from the references
//
// The differential test (scripts/v4a_reference.sh, the Agents SDK's
// applyDiff) explains each: an added file's lines each end in "\n", as
// codex writes them (applyDiff leaves the last without one); a move onto an
// existing file is refused (both references overwrite it); a lone "@@"
// anchor found in no line fails (applyDiff ignores it, codex refuses it);
// a UTF-8 BOM is kept and never part of the first line.
package patch
