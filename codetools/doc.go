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
// Beside its text, each tool that has something to show attaches an
// [llmtoolkit.Display] for hosts, with a payload of a documented type
// ([FilePayload], [DiffPayload], [ProcessPayload], [MatchesPayload],
// [FilesPayload], [WebpagePayload]) whose JSON keys are camelCase; a host
// renders it with a type switch, and [DecodeDisplay] types one read back
// from JSON.
package codetools
