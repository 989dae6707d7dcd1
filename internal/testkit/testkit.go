// Package testkit holds the fixtures that the tests of more than one
// package share (codetools' tool-level tests and the engines' own tests):
// ripgrep as a reference for grep, HTML pages built to cost a converter
// more than their size, and the language servers the LSP tests run
// against. Only tests import it.
package testkit

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// RipgrepLines returns the numbers of the lines ripgrep reports for
// pattern in file, or skips the test when rg is not installed.
func RipgrepLines(t testing.TB, pattern, file string) []int {
	t.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg (ripgrep) is not installed: apt-get install ripgrep")
	}
	out, err := exec.Command(rg, "--line-number", "--no-heading", "--no-filename", "--color", "never", "-e", pattern, "--", file).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil // no match
	}
	require.NoError(t, err)
	var lines []int
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		n, err := strconv.Atoi(l[:strings.IndexByte(l, ':')])
		require.NoError(t, err, "rg line %q", l)
		lines = append(lines, n)
	}
	return lines
}

// HostilePage builds a page of about size bytes that costs an HTML to
// Markdown converter much more than its size: empty links (made absolute
// with the page's long host), links to a long host, or many short lines at
// the bottom of lists and quotes nested as deep as the HTML parser allows
// (each line indented at every level). Kinds: empty-links, host-links,
// deep-list, deep-quote, text-comments, spans; another kind panics.
func HostilePage(kind string, size int) string {
	var head, unit string
	switch kind {
	case "empty-links":
		unit = `<a></a>`
	case "host-links":
		unit = `<a href="http://` + strings.Repeat("h", 240) + `.example/"></a>`
	case "deep-list":
		head, unit = strings.Repeat("<ul><li>", 250), "x<br>"
	case "deep-quote":
		head, unit = strings.Repeat("<blockquote>", 500), "x<br>"
	case "text-comments": // text nodes the converter merges once the comments are gone
		unit = "x<!---->"
	case "spans":
		unit = "<span>x</span>"
	default:
		panic("unknown page kind " + kind)
	}
	head = "<!DOCTYPE html><html><body>" + head
	return head + strings.Repeat(unit, max(0, size-len(head))/len(unit))
}
