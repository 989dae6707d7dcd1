// Command grepbench runs codetools' grep or glob on the current folder with
// no limits, for bench/grep.sh to time against ripgrep and fd.
//
//	grepbench grep [-i] [-F] PATTERN   prints path:N: text for every match
//	grepbench glob PATTERN             prints every matching path
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/pprof"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
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
	ct, err := codetools.New(".", codetools.WithGrepMaxBytes(math.MaxInt))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer ct.Close()
	args := map[string]any{"pattern": fs.Arg(0), "limit": 1 << 30}
	if tool == "grep" {
		args["ignoreCase"] = *ignoreCase
		args["literal"] = *literal
	}
	out, err := ct.Resolve(context.Background(), llmtoolkit.Call{Name: tool, Arguments: args})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1) //nolint:gocritic // the profile is not needed on failure
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	w.WriteString(out)
	w.WriteString("\n")
	w.Flush()
}
