// Package search is the engine behind codetools' grep tool: it compiles a
// pattern, searches files for the lines that match it, and writes the
// answer. The tool walks the folder tree, opens the files and shows the
// Display; everything between the bytes of a file and the text of the
// answer is here.
//
//	q, err := search.Compile(pattern, literal, ignoreCase, contextLines)
//	col := search.NewCollector(limit)
//	s := search.NewSearcher(q, limit, maxBytes) // one per walker goroutine
//	for each file: res, err := s.Search(ctx, f); col.Add(rel, res)
//	a, err := search.Write(col, search.Options[Match]{...})
//
// # Lines only
//
// The regular expression is made line-oriented the way ripgrep does it
// (Compile): '\n' is removed from every class ([^q], \s, (?s).), \A and \z
// become ^ and $ of (?m), and a literal line break is refused
// ([ErrNewline]). Such an expression never matches across a line break, so
// a block of lines (whole-block reads of [BlockMin] bytes, most files in
// one) is searched once from end to end, in time linear in its size, and
// every match lies inside the line it is reported on. Line boundaries are
// found only around hits. An empty match at the end of a last line without
// a newline is found, as by ripgrep. A line longer than [BlockMax] is
// streamed through the regular expression whole, with the same memory.
// Only the standard library's regexp runs: no other engine, no cgo.
//
// # Prefilters (prefilter.go, literal.go, fold.go)
//
// Before the regular expression runs, a prefilter finds the lines that may
// match, from the parse tree of the line-only expression: the literals one
// of which every match holds (an alternation gives several, a
// concatenation its best part; the other parts of the concatenation are
// checked on the candidate line, ^literal is checked as a prefix, and the
// bytes beside a literal are checked against what its neighbours can end
// and start with, \b included). K (U+212A) and ſ (U+017F), the only
// non-ASCII folds of ASCII letters, are needles of their own; U+FFFD is
// never a needle (it matches invalid UTF-8). A pattern with no literal
// ([α-ω]+) is prefiltered on the bytes a match can start with when they are
// few or all outside ASCII (UTF-8 lead bytes, ASCII skipped 16 bytes at a
// time). A hit is a match without the regular expression when it is one of
// a whole literal, of a branch of an alternation of literals, of
// \bliteral\b or ^literal, or a byte of an ASCII class [...] or [...]+.
// Each needle passes over a block once; no block is ever copied or lowered.
//
// # Probes (probe.go, probe_amd64.s)
//
// Each needle is found by its probe: its two rarest bytes, at their
// offsets, compared at 32 positions per step with AVX2 (read from
// golang.org/x/sys/cpu; elsewhere, or with the purego build tag,
// bytes.IndexByte jumps to one of them, in windows that double so that a
// call costs about the distance to what it finds), each text byte ORed
// with 0x20 first when it stands for a letter of a case-insensitive
// needle, so that one comparison takes both cases and nothing else. A
// needle of one byte whose next byte must be in a narrow set (the digits
// after the '-' of a date) is probed on that byte too, ORed with the bits
// the set's bytes differ in. A candidate is then checked whole. A call of
// the probe costs little (its bytes are broadcast from memory: through
// general registers it cost some 350 ns on AMD EPYC), so many candidates
// are cheap.
//
// # Windows (window.go)
//
// A pattern whose matches are at most 256 bytes long and that has no
// assertion is tested on a line over 1 KiB only in windows around its
// prefilter's hits, starting and ending on rune boundaries: minified or
// generated lines do not go through Go's NFA (it has no DFA) whole.
// Without a prefilter the expression runs over windows of about 2 KiB of
// whole lines, short enough for regexp's backtracker.
//
// # Deadlines (work.go)
//
// The context is checked before every block and every refill of a long
// line, and inside a line too: each run of the expression counts its work
// (bytes times program size, an upper bound of the NFA's steps) and the
// context is checked every 2^20 steps; a run that could pass that reads
// its input through a checking rune reader. A search that the context
// stops returns its error, never a partial "no match".
//
// # The answer (answer.go)
//
// This package owns the answer's format: "path:N: text" for a match,
// "path-N- text" for a context line, "--" between groups, lines cut at 500
// characters, and a closing notice when the limit or the size cap cut it.
// Many matches cost little each: a [Searcher] writes a file's lines as the
// answer shows them but for the path (one string per file, [FileResult]),
// stopping past the answer's cap while it still counts the matches; the
// [Collector] keeps only the files that can still be shown, sorted once
// when the walk ends unless the limit was reached earlier; [Write] plans
// the answer file by file (only the file where it ends is read line by
// line), then writes it into one buffer of its final size, the path before
// each line, listing the matches shown (whose texts are substrings of the
// answer) in the same pass, from several goroutines past 1 MiB. Once the
// limit is reached only the last match's own context lines follow it.
package search
