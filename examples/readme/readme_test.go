package readme

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite README.md's Go blocks from the snippet regions")

// repoRoot is the repository's root, where README.md is.
const repoRoot = "../.."

// snippetMarker names the region a Go block is: "<!-- snippet: FILE#NAME -->",
// FILE relative to the repository's root.
var snippetMarker = regexp.MustCompile(`^<!-- snippet: ([^#\s]+)#(\S+) -->$`)

// region returns the lines between "// readme:begin name" and
// "// readme:end" in src, every region of that name in order (joined by
// a blank line), without the indentation they share.
func region(src, name string) (string, error) {
	var parts []string
	var cur []string
	in := false
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "// readme:begin "+name:
			if in {
				return "", fmt.Errorf("region %q begins twice without an end", name)
			}
			in, cur = true, nil
		case in && trimmed == "// readme:end":
			in = false
			parts = append(parts, dedent(cur))
		case in:
			cur = append(cur, line)
		}
	}
	if in {
		return "", fmt.Errorf("region %q has no end", name)
	}
	if parts == nil {
		return "", fmt.Errorf("no region %q", name)
	}
	return strings.Join(parts, "\n\n"), nil
}

// dedent removes the leading tabs every non-empty line shares, and the
// blank lines at either end.
func dedent(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t"))
		if common < 0 || n < common {
			common = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			l = l[common:]
		}
		out[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(out, "\n")
}

// goBlock is one fenced Go block of a Markdown text.
type goBlock struct {
	line       int    // 1-based line of the opening fence
	file, name string // its snippet marker
	body       string // its text, without the fences
	start, end int    // the body's lines, [start, end) 0-based
}

// goBlocks lists the Go blocks of md with the marker just above each
// (file and name empty when there is none).
func goBlocks(md string) ([]goBlock, error) {
	lines := strings.Split(md, "\n")
	var blocks []goBlock
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		b := goBlock{line: i + 1, start: i + 1}
		if i > 0 {
			if m := snippetMarker.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				b.file, b.name = m[1], m[2]
			}
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
			j++
		}
		if j == len(lines) {
			return nil, fmt.Errorf("line %d: the Go block is not closed", b.line)
		}
		b.end = j
		b.body = strings.Join(lines[i+1:j], "\n")
		blocks = append(blocks, b)
		i = j
	}
	return blocks, nil
}

// checkSnippets compares every Go block of md with its region, read by
// readFile (a path relative to the repository's root); it returns md with
// every block replaced by its region, and the differences.
func checkSnippets(md string, readFile func(string) (string, error)) (string, []string) {
	blocks, err := goBlocks(md)
	if err != nil {
		return md, []string{err.Error()}
	}
	var problems []string
	lines := strings.Split(md, "\n")
	for k := len(blocks) - 1; k >= 0; k-- { // from the end, so earlier lines keep their place
		b := blocks[k]
		if b.file == "" {
			problems = append(problems, fmt.Sprintf("line %d: a Go block without a <!-- snippet: FILE#NAME --> line above it", b.line))
			continue
		}
		src, err := readFile(b.file)
		if err != nil {
			problems = append(problems, fmt.Sprintf("line %d: %v", b.line, err))
			continue
		}
		want, err := region(src, b.name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("line %d: %s: %v", b.line, b.file, err))
			continue
		}
		if b.body != want {
			problems = append(problems, fmt.Sprintf("line %d: the block differs from %s#%s:\n--- README\n%s\n--- source\n%s", b.line, b.file, b.name, b.body, want))
			lines = append(lines[:b.start], append(strings.Split(want, "\n"), lines[b.end:]...)...)
		}
	}
	return strings.Join(lines, "\n"), problems
}

func readRepoFile(rel string) (string, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(rel)))
	return string(data), err
}

// TestReadmeSnippetsAreCompiled checks that every Go block of README.md is
// a region of a compiled file. Run with -update to rewrite the blocks from
// their regions.
func TestReadmeSnippetsAreCompiled(t *testing.T) {
	path := filepath.Join(repoRoot, "README.md")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	fixed, problems := checkSnippets(string(data), readRepoFile)
	if *update && fixed != string(data) {
		require.NoError(t, os.WriteFile(path, []byte(fixed), 0o644))
		t.Logf("rewrote %d block(s) of README.md", len(problems))
		return
	}
	assert.Empty(t, problems, "README.md's Go blocks must be compiled snippets (go test ./examples/readme -run TestReadme -update rewrites them)")
	blocks, err := goBlocks(string(data))
	require.NoError(t, err)
	assert.NotEmpty(t, blocks)
}

// The check fails on a block that is not a region, a block that differs
// from its region, and a missing region; it passes on a faithful copy.
func TestCheckSnippets(t *testing.T) {
	src := "package x\n\nfunc f() {\n\t// readme:begin one\n\ta := 1\n\tif a > 0 {\n\t\ta++\n\t}\n\t// readme:end\n}\n"
	files := map[string]string{"x.go": src}
	read := func(p string) (string, error) {
		s, ok := files[p]
		if !ok {
			return "", os.ErrNotExist
		}
		return s, nil
	}
	good := "# T\n\n<!-- snippet: x.go#one -->\n```go\na := 1\nif a > 0 {\n\ta++\n}\n```\n"
	fixed, problems := checkSnippets(good, read)
	assert.Empty(t, problems)
	assert.Equal(t, good, fixed)

	tests := map[string]string{
		"no marker":      "```go\nx := 1\n```\n",
		"differs":        "<!-- snippet: x.go#one -->\n```go\na := 2\n```\n",
		"missing region": "<!-- snippet: x.go#two -->\n```go\na := 1\n```\n",
		"missing file":   "<!-- snippet: y.go#one -->\n```go\na := 1\n```\n",
		"not closed":     "<!-- snippet: x.go#one -->\n```go\na := 1\n",
	}
	for name, md := range tests {
		_, problems := checkSnippets(md, read)
		assert.NotEmpty(t, problems, name)
	}
	fixed, _ = checkSnippets("<!-- snippet: x.go#one -->\n```go\na := 2\n```\n", read)
	assert.Equal(t, "<!-- snippet: x.go#one -->\n```go\na := 1\nif a > 0 {\n\ta++\n}\n```\n", fixed, "-update writes the region")
}
