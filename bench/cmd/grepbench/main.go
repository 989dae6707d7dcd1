//go:build unix

// Command grepbench runs grep's engine (internal/search) or codetools' glob
// on the current folder with no limits, for bench/grep.sh to time against
// ripgrep and fd.
//
//	grepbench grep [-i] [-F] PATTERN   prints path:N: text for every match
//	grepbench glob PATTERN             prints every matching path
//
// grep walks the folder as the tool does (hidden files searched, .git
// skipped, .gitignore files honoured, symbolic links not followed) and
// calls the engine directly: the search, the collector and the answer with
// its list of matches, as the tool builds them.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/internal/gitignore"
	"github.com/llmtoolkit/llmtoolkit/internal/search"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: grepbench grep [-i] [-F] PATTERN | grepbench glob PATTERN")
		os.Exit(2)
	}
	tool := os.Args[1]
	fs := flag.NewFlagSet(tool, flag.ExitOnError)
	ignoreCase := fs.Bool("i", false, "ignore case")
	literal := fs.Bool("F", false, "literal pattern")
	_ = fs.Parse(os.Args[2:])
	if fs.NArg() != 1 || (tool != "grep" && tool != "glob") {
		fmt.Fprintln(os.Stderr, "usage: grepbench grep [-i] [-F] PATTERN | grepbench glob PATTERN")
		os.Exit(2)
	}
	if path := os.Getenv("GREPBENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	if tool == "grep" {
		out, err := grep(fs.Arg(0), *literal, *ignoreCase)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1) //nolint:gocritic // the profile is not needed on failure
		}
		write(out)
		return
	}
	ct, err := codetools.New(".", codetools.WithGrepMaxBytes(math.MaxInt))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer ct.Close()
	args := map[string]any{"pattern": fs.Arg(0), "limit": 1 << 30}
	out, err := ct.Resolve(context.Background(), llmtoolkit.Call{Name: tool, Arguments: args})
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

// grep searches every file below the current folder and returns the answer.
func grep(pattern string, literal, ignoreCase bool) (string, error) {
	const limit = 1 << 30
	q, err := search.Compile(pattern, literal, ignoreCase, 0)
	if err != nil {
		return "", err
	}
	col := search.NewCollector(limit)
	workers := max(2, runtime.GOMAXPROCS(0))
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		queue   = []dirItem{{rel: ""}}
		pending = 1
		wg      sync.WaitGroup
	)
	for range workers {
		s := search.NewSearcher(q, limit, 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				for len(queue) == 0 && pending > 0 {
					cond.Wait()
				}
				if len(queue) == 0 {
					mu.Unlock()
					return
				}
				it := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				mu.Unlock()
				subs := visitDir(it, s, col)
				mu.Lock()
				queue = append(queue, subs...)
				pending += len(subs) - 1
				cond.Broadcast()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	a, err := search.Write(col, search.Options[match]{
		MaxBytes: math.MaxInt,
		Item:     func(path string, line int, text string) match { return match{path, line, text} },
		Parts:    workers,
		Go: func(_ string, fn func() error) <-chan error {
			done := make(chan error, 1)
			go func() { done <- fn() }()
			return done
		},
	})
	return a.Text, err
}

// dirItem is a folder to list: its path from the current folder ("" for
// it) and the matcher of the .gitignore files above it.
type dirItem struct {
	rel string
	m   *gitignore.Matcher
}

// readIgnore reads a .gitignore: a regular file only, at most 1 MiB.
func readIgnore(name string) ([]byte, error) {
	fi, err := os.Lstat(filepath.FromSlash(name))
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return nil, fmt.Errorf("%s: not a small regular file", name)
	}
	return os.ReadFile(filepath.FromSlash(name))
}

// visitDir searches the regular files of folder it, each opened from the
// folder's descriptor (as the tool opens them, without a path walk per
// file), and returns its subfolders.
func visitDir(it dirItem, s *search.Searcher, col *search.Collector) []dirItem {
	dir := it.rel
	if dir == "" {
		dir = "."
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	d := os.NewFile(uintptr(fd), dir)
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil
	}
	m := it.m
	if slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == ".gitignore" }) {
		m, _ = gitignore.LoadDir(readIgnore, it.rel, it.m)
	}
	var subs []dirItem
	for _, e := range entries {
		rel := path.Join(it.rel, e.Name())
		isDir := e.IsDir()
		if e.Name() == ".git" || m.Ignored(rel, isDir) {
			continue
		}
		switch {
		case isDir:
			subs = append(subs, dirItem{rel: rel, m: m})
		case e.Type().IsRegular():
			ffd, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			res, err := s.Search(context.Background(), fdReader(ffd))
			unix.Close(ffd)
			if err == nil && res.Matches() > 0 {
				col.Add(rel, res)
			}
		}
	}
	return subs
}

// fdReader reads a file descriptor.
type fdReader int

func (r fdReader) Read(p []byte) (int, error) {
	n, err := unix.Read(int(r), p)
	if n == 0 && err == nil && len(p) > 0 {
		return 0, io.EOF
	}
	if n < 0 {
		n = 0
	}
	return n, err
}
