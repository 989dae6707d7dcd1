// Command testskips reads the output of "go test -json" and prints it as
// "go test" would without -json: each package's result line and the whole
// output of every test that failed (the output of passing and skipped
// tests is left out, as go test leaves it out without -v). With -skips FILE
// it also writes, one a line, "PACKAGE<TAB>TEST" for every top-level test
// that was skipped, or that passed with a subtest skipped: the tests a
// second "go test -run" can run where the first left something out.
//
// scripts/test.sh --race uses it: the packages built for concurrency run
// under -race with -short, then the tests -short left out run once more
// without -race, and no other test runs twice.
//
//	go test -json -short ./... | go run ./tools/testskips -skips skipped.txt
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of go test -json (cmd/test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	skips := flag.String("skips", "", "the file to write the skipped tests to, PACKAGE<TAB>TEST a line")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *skips); err != nil {
		fmt.Fprintln(os.Stderr, "testskips:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer, skipsFile string) error {
	type key struct{ pkg, test string }
	output := map[key][]string{} // a running test's output, kept until it ends
	skipped := map[key]bool{}    // top-level tests to run again
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	w := bufio.NewWriter(out)
	defer w.Flush()
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (a build failure goes to stderr, but be safe).
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		k := key{e.Package, e.Test}
		switch {
		case e.Test == "" && e.Action == "output":
			// The package's own lines: its result, a panic, a build error.
			if !strings.HasPrefix(e.Output, "=== ") && e.Output != "PASS\n" && e.Output != "FAIL\n" {
				w.WriteString(e.Output)
			}
		case e.Action == "output":
			output[k] = append(output[k], e.Output)
		case e.Action == "fail":
			for _, o := range output[k] {
				w.WriteString(o)
			}
			delete(output, k)
		case e.Action == "skip":
			top, _, _ := strings.Cut(e.Test, "/")
			skipped[key{e.Package, top}] = true
			delete(output, k)
		case e.Action == "pass":
			delete(output, k)
		}
		if e.Test == "" && (e.Action == "fail" || e.Action == "pass") {
			w.Flush()
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if skipsFile == "" {
		return nil
	}
	lines := make([]string, 0, len(skipped))
	for k := range skipped {
		lines = append(lines, k.pkg+"\t"+k.test)
	}
	sort.Strings(lines)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return os.WriteFile(skipsFile, []byte(b.String()), 0o644)
}
