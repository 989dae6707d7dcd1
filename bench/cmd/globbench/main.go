// Command globbench runs codetools' glob on the current folder with no
// limit, for bench/grep.sh to time against fd.
//
//	globbench PATTERN   prints every matching path
//
// It is apart from grepbench, which calls grep's engine directly: a binary
// that links codetools spends some 4 ms of CPU starting (the packages'
// init), which grepbench's figures would count as grep's.
package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: globbench PATTERN")
		os.Exit(2)
	}
	ct, err := codetools.New(".", codetools.WithGrepMaxBytes(math.MaxInt))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	args := map[string]any{"pattern": os.Args[1], "limit": 1 << 30}
	out, err := ct.Resolve(context.Background(), llmtoolkit.Call{Name: "glob", Arguments: args})
	ct.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	w.WriteString(out)
	w.WriteString("\n")
	w.Flush()
}
