// Package codetools provides the tools every coding agent needs — read_file,
// write_file, edit_file, multi_edit, append_to_file, bash, grep, glob,
// list_directory, tree, file_info and http_get — behind one
// [llmtoolkit.Resolver], confined to a root folder.
//
// Every path is resolved inside the root through [os.Root], so neither ".."
// nor a symbolic link can reach outside it. Every output is capped, every
// subprocess is killed with its children on timeout, and edits follow exact,
// predictable rules that never corrupt a file.
//
// # Names in answers
//
// Every listing (grep, glob, list_directory, tree, file_info, and the paths
// of the Display payloads) shows a name or path by one rule: as it is when
// it is plain text; as a Go double-quoted string (strconv.Quote) when it
// holds a line break or another control character, a character that does
// not print (such as U+202E), invalid UTF-8, or a part that starts with a
// double quote. So a file named "x.txt\nsecrets/prod.env:1: ..." is shown
// on one line, quoted, and cannot forge a line of the answer. Every path
// argument reads the rule back: the whole path, or any part of it between
// slashes, written as such a quoted string is unquoted, so a name shown
// can be passed as a path and opens the file it names.
//
// Beside its text, each tool that has something to show attaches an
// [llmtoolkit.Display] for hosts, with a payload of a documented type
// ([FilePayload], [DiffPayload], [ProcessPayload], [MatchesPayload],
// [FilesPayload], [WebpagePayload]) whose JSON keys are camelCase; a host
// renders it with a type switch, and [DecodeDisplay] types one read back
// from JSON.
package codetools
