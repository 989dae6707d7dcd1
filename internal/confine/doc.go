// Package confine opens the paths a tool is given inside one root folder,
// and turns a path argument into the one path that both a permission check
// and the tool's open see.
//
// # Canonical paths
//
// [Root.Canonical] is the one function that turns a path argument into
// the path a tool opens: [Root.Rel] (an absolute path inside the root made
// relative, ".", "..", "//" and a trailing slash cleaned, a path outside
// refused), then [Root.Resolve] (symbolic links inside the root followed to
// their target, a link out refused). The tools open what it returns, and
// their definitions declare the same function as [llmtoolkit.PathArguments]
// Canonical, so that a permission layer checks the very path the tool
// opens: the two cannot disagree. codetools' FuzzCanonicalPathIsWhatToolsOpen
// checks it against the tools.
//
// Resolve looks each component up in its folder's handle (one step however
// deep the folder lies; the handles of the last few levels are kept, so a
// ".." of a link target steps back without a new open from the root), so
// its work is linear in the depth of the path, and it checks the context as
// it goes. It follows at most 40 links. The part of a path that does not
// exist yet is kept as it is (a write creates it).
//
// # Opening
//
// Every access goes through an [os.Root], which checks every component
// again, so a link swapped in after Canonical still cannot lead out.
// [Root.Open] and [Root.OpenIn] open without blocking (O_NONBLOCK on Unix:
// a named pipe renamed over a file returns at once) and check the file type
// on the opened descriptor, never on an earlier stat that a rename can
// race: anything that is not what the caller asked for ([File], [Dir],
// [Either]) is closed and refused with an error naming the path. Opening a
// pipe for writing with no reader (ENXIO) is refused the same way, and a
// socket is named as one. [LinkCount] lets a tool that writes in place
// refuse a file with other names, and [CheckLinks] (wrapping [ErrLinked])
// is the refusal of a file with other names that codetools makes, on the
// opened descriptor's count, while a host's deny rules are in force.
//
// Errors for a path that leaves the root wrap the sentinel the caller gives
// in [Root.Outside] (codetools.ErrOutsideRoot), so callers branch on it with
// errors.Is.
//
// [llmtoolkit.PathArguments]: https://pkg.go.dev/github.com/llmtoolkit/llmtoolkit#PathArguments
package confine
