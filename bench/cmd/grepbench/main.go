// Command grepbench runs grep's engine (internal/search) on the current
// folder with no limits, for bench/grep.sh to time against ripgrep.
//
//	grepbench grep [-i] [-F] PATTERN   prints path:N: text for every match
//
// It walks the folder with the tool's walker (internal/walk: hidden files
// searched, .git skipped, .gitignore files honoured, symbolic links not
// followed) and calls the engine directly: the search, the collector and
// the answer with its list of matches, as the tool builds them. It does
// not link codetools, whose packages' init would cost some 4 ms of CPU at
// every start (glob is timed by bench/cmd/globbench). Nor does the engine
// link net/http (and with it cgo and the dynamic loader): with it, through
// internal/textutil, a start cost some 2.1 ms of CPU and 2.6 ms of wall
// time on an empty folder, without it 1.2 ms and 1.6 ms.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/search"
	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: grepbench grep [-i] [-F] PATTERN")
		os.Exit(2)
	}
	tool := os.Args[1]
	fs := flag.NewFlagSet(tool, flag.ExitOnError)
	ignoreCase := fs.Bool("i", false, "ignore case")
	literal := fs.Bool("F", false, "literal pattern")
	_ = fs.Parse(os.Args[2:])
	if fs.NArg() != 1 || tool != "grep" {
		fmt.Fprintln(os.Stderr, "usage: grepbench grep [-i] [-F] PATTERN")
		os.Exit(2)
	}
	if path := os.Getenv("GREPBENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	out, err := grep(fs.Arg(0), *literal, *ignoreCase)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1) //nolint:gocritic // the profile is not needed on failure
	}
	write(out)
}

func write(out string) {
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	w.WriteString(out)
	w.WriteString("\n")
	w.Flush()
}

// match is the record of a match shown, as codetools.Match.
type match struct {
	Path string
	Line int
	Text string
}

// grep searches every file below the current folder, walked by the tool's
// walker (internal/walk), and returns the answer.
func grep(pattern string, literal, ignoreCase bool) (string, error) {
	const limit = 1 << 30
	q, err := search.Compile(pattern, literal, ignoreCase, 0)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	fsroot, err := os.OpenRoot(abs)
	if err != nil {
		return "", err
	}
	defer fsroot.Close()
	w := walk.Walker{Root: &confine.Root{FS: fsroot, Dir: abs, Outside: errOutside}, Go: goGuarded}
	col := search.NewCollector(limit)
	searchers := make([]*search.Searcher, walk.Workers())
	for i := range searchers {
		searchers[i] = search.NewSearcher(q, limit, 0)
	}
	err = w.Walk(context.Background(), ".", func(worker int, f walk.File) {
		if col.Skip(f.Rel) {
			return
		}
		file, err := f.Dir.Open(f.Name)
		if err != nil {
			return
		}
		res, err := searchers[worker].Search(context.Background(), file)
		file.Close()
		if err == nil && res.Matches() > 0 {
			col.Add(f.Rel, res)
		}
	})
	if err != nil {
		return "", err
	}
	a, err := search.Write(col, search.Options[match]{
		MaxBytes: math.MaxInt,
		Item:     func(path string, line int, text string) match { return match{path, line, text} },
		Parts:    walk.Workers(),
		Go:       goGuarded,
	})
	return a.Text, err
}

// errOutside is the error of a path that leaves the current folder.
var errOutside = errors.New("outside the folder")

// goGuarded runs fn under the project's goroutine guard, as the tool does.
func goGuarded(what string, fn func() error) <-chan error { return guard.Go(what, fn, nil) }
