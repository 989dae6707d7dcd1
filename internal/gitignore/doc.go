// Package gitignore matches slash-separated paths against .gitignore files
// with git's semantics, for tools that walk a folder tree (tree, grep, glob).
//
// A walk builds a [Matcher] as it descends: start from the root's matcher,
// and for each folder call [Matcher.Child] (or [LoadDir]) with the content of
// that folder's .gitignore. A Matcher is immutable, so a walker running in
// parallel can share it between goroutines and pass each subfolder its own
// child; a folder without a .gitignore costs nothing, because Child returns
// its receiver unchanged. A nil *Matcher ignores nothing.
//
//	m, err := gitignore.LoadDir(readFile, "", nil) // readFile: see LoadDir
//	...
//	for each entry of folder dir (whose matcher is m):
//		rel := path.Join(dir, entry.Name())
//		if entry.Name() == ".git" || m.Ignored(rel, entry.IsDir()) {
//			continue // skip the file, or do not descend into the folder
//		}
//		if entry.IsDir() {
//			child, err := gitignore.LoadDir(readFile, rel, m)
//			...
//		}
//
// A .gitignore that cannot be read is skipped with an error the caller
// reports, and the walk goes on, as in git. Which files may be read is the
// readFile function's choice; git reads none through a symbolic link
// (since git 2.32).
//
// Paths are relative to the walk root, slash-separated, without a leading
// "./" or a trailing slash. Patterns follow gitignore(5):
//
//   - Blank lines and lines starting with "#" are skipped; "\#" and "\!"
//     begin a pattern with a literal "#" or "!". Trailing spaces are dropped
//     unless escaped with a backslash. A UTF-8 byte order mark and CRLF line
//     ends are accepted.
//   - "!" negates a pattern: a path it matches is not ignored. The last
//     matching pattern decides, and patterns of a deeper .gitignore come after
//     those of shallower ones.
//   - A trailing "/" makes a pattern match folders only.
//   - A pattern with a "/" at its start or in its middle is anchored to the
//     folder of its .gitignore; otherwise it matches a name at any depth
//     below that folder.
//   - "*", "?" and bracket expressions ("[a-z]", "[!a-z]", "[^a-z]",
//     "[[:digit:]]") never match "/"; "**/" at the start, "/**" at the end and
//     "/**/" in the middle match any number of folders, as in git's wildmatch.
//
// Git cannot re-include a file whose parent folder is excluded, because it
// never reads an excluded folder. [Matcher.Ignored] looks at the path itself
// only, which is all a walker needs: it simply does not descend into an
// ignored folder. To test an arbitrary path, including the folders on its
// way, use [Matcher.IgnoredWithParents].
//
// Matching does not allocate and uses no regular expressions: each pattern
// is compiled once, at parse time, to a literal comparison (for "name",
// "*.o", "/build", "dir/**", "**/name", ...) or, for the remaining patterns,
// to a port of git's wildmatch over the pattern's non-literal tail, with the
// early aborts of git 2.41 that keep it from backtracking for minutes on
// patterns like "*a*a*a*a*a*a*a*a*ab*c". Matching is case-sensitive, as
// git's is by default (core.ignoreCase=false).
package gitignore
