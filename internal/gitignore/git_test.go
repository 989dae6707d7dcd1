package gitignore

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests use real git as the oracle. They are skipped without git.

// newRepo makes dir a git repository isolated from the user's and system's
// configuration (no global excludes file) and returns a function running git
// in it.
func newRepo(t *testing.T, dir string) func(stdin []byte, args ...string) []byte {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not found")
	}
	home := t.TempDir()
	env := append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
	)
	run := func(stdin []byte, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(gitPath, args...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, bytes.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		// check-ignore exits with 1 when no path is ignored.
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && stderr.Len() == 0 {
			err = nil
		}
		require.NoError(t, err, "git %s: %s", strings.Join(args, " "), stderr.String())
		return out
	}
	run(nil, "init", "-q", ".")
	return run
}

// gitIgnored asks git check-ignore which of paths are ignored. Folders must
// exist on disk, since git tells them from files with lstat. (A trailing
// slash would mark a folder too, but then git also matches the empty name
// after the slash, which no walk ever asks about.)
func gitIgnored(run func([]byte, ...string) []byte, paths []string) map[string]bool {
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	out := run(in.Bytes(), "check-ignore", "--no-index", "--stdin", "-z")
	ignored := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			ignored[p] = true
		}
	}
	return ignored
}

func splitZ(b []byte) []string {
	var out []string
	for _, s := range strings.Split(string(b), "\x00") {
		if s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// TestPatternsAgreeWithGit runs every case of the pattern table through git.
// Each distinct .gitignore goes in its own folder cN of one repository, and
// its paths are asked about below cN.
func TestPatternsAgreeWithGit(t *testing.T) {
	folder := map[string]string{} // .gitignore content -> its folder
	for _, c := range patternCases {
		if _, ok := folder[c.gitignore]; !ok {
			folder[c.gitignore] = fmt.Sprintf("c%d", len(folder))
		}
	}
	// Ask about each path twice, once as a file (absent from disk) and
	// once as a folder, so that dir-only patterns are covered both ways.
	for _, asDir := range []bool{false, true} {
		dir := t.TempDir()
		run := newRepo(t, dir)
		var paths []string
		for content, sub := range folder {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, sub), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, sub, ".gitignore"), []byte(content), 0o644))
		}
		for _, c := range patternCases {
			p := folder[c.gitignore] + "/" + c.path
			paths = append(paths, p)
			if asDir {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.FromSlash(p)), 0o755))
			}
		}
		want := gitIgnored(run, paths)
		for i, c := range patternCases {
			m := (*Matcher)(nil).Child(folder[c.gitignore], []byte(c.gitignore))
			assert.Equal(t, want[paths[i]], m.IgnoredWithParents(paths[i], asDir),
				"gitignore %q, path %q, dir=%v", c.gitignore, c.path, asDir)
		}
	}
}

// Random trees: names and pattern pieces chosen to collide often.
var (
	fileNames = []string{"a", "b.txt", "c.go", "d.o", "x.log", "keep.log", "Foo", "foo",
		"a b", "#h", "!bang", "q*", "sp ", "[x]", "e1", "e2", "ab.go", "ba.txt", "x.tmp"}
	dirNames    = []string{"a", "b", "foo", "build", "src", "x y", "d1", "e2", "sub"}
	patternBits = []string{"a", "b", "foo", "Foo", "build", "src", "sub", "d1", "e2", "b.txt", "c.go",
		"*.txt", "*.go", "*.o", "*o", "*.log", "!keep.log", "e*", "a*", "?.go", "e?", "d?",
		"[a-c]*", "[!a]*", "[^ab]*", "[[:alpha:]]", "[[:digit:]]*", "*[0-9]", "a?b",
		`\#h`, `\!bang`, `q\*`, `sp\ `, `\[x]`, "x y", "a b", "*",
		// Several stars, where wildmatch's aborts decide.
		"*o*o*", "*.*t", "b*.*", "*b*/*", "*e*?", "?*1*"}
)

func randomPattern(r *rand.Rand) string {
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	var body string
	switch r.IntN(10) {
	case 0:
		body = "**/" + pick(patternBits)
	case 1:
		body = pick(dirNames) + "/**"
	case 2:
		body = pick(dirNames) + "/**/" + pick(patternBits)
	case 3:
		body = pick(dirNames) + "/" + pick(patternBits)
	case 4:
		body = "*/" + pick(patternBits)
	case 5:
		body = pick(dirNames) + "/*"
	default:
		body = pick(patternBits)
	}
	if r.IntN(5) == 0 && !strings.HasPrefix(body, "!") {
		body = "/" + body
	}
	if r.IntN(4) == 0 && !strings.HasPrefix(body, "!") {
		body = "!" + body
	}
	if r.IntN(5) == 0 {
		body += "/"
	}
	if r.IntN(10) == 0 {
		body += "  "
	}
	return body
}

// buildTree writes a random tree of folders, files and .gitignore files.
func buildTree(t *testing.T, r *rand.Rand, dir string) {
	var mk func(rel string, depth int)
	mk = func(rel string, depth int) {
		abs := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(abs, 0o755))
		for range 2 + r.IntN(5) {
			name := fileNames[r.IntN(len(fileNames))]
			require.NoError(t, os.WriteFile(filepath.Join(abs, name), nil, 0o644))
		}
		if r.IntN(3) != 0 {
			var lines []string
			for range 1 + r.IntN(6) {
				lines = append(lines, randomPattern(r))
			}
			if r.IntN(4) == 0 {
				lines = append(lines, "# comment", "")
			}
			content := strings.Join(lines, "\n") + "\n"
			require.NoError(t, os.WriteFile(filepath.Join(abs, ".gitignore"), []byte(content), 0o644))
		}
		if depth < 3 {
			for range r.IntN(4) {
				sub := dirNames[r.IntN(len(dirNames))]
				if _, err := os.Stat(filepath.Join(abs, sub)); err == nil {
					continue // already a file or a folder
				}
				mk(path.Join(rel, sub), depth+1)
			}
		}
	}
	mk("", 0)
}

// TestAgainstGitRandomTrees compares, on many generated trees, both a
// walk's result with git ls-files and every path's status with git
// check-ignore.
func TestAgainstGitRandomTrees(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 10
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel() // each tree in its own folder, with its own git
			r := rand.New(rand.NewPCG(uint64(seed), 42))
			dir := t.TempDir()
			run := newRepo(t, dir)
			buildTree(t, r, dir)
			root, err := os.OpenRoot(dir)
			require.NoError(t, err)
			defer root.Close()

			// What a walker sees, against git ls-files.
			want := splitZ(run(nil, "ls-files", "-z", "--others", "--exclude-per-directory=.gitignore"))
			assert.Equal(t, want, walk(t, root, "", nil), "walk vs git ls-files")

			// Every path, including those in ignored folders, against git
			// check-ignore.
			var paths []string
			var dirs []bool
			var matchers []*Matcher
			var visit func(dir string, m *Matcher)
			visit = func(dir string, parent *Matcher) {
				m, err := LoadDir(root.ReadFile, dir, parent)
				require.NoError(t, err)
				entries, err := fs.ReadDir(root.FS(), cmpOr(dir, "."))
				require.NoError(t, err)
				for _, e := range entries {
					if e.Name() == ".git" {
						continue
					}
					rel := path.Join(dir, e.Name())
					paths, dirs, matchers = append(paths, rel), append(dirs, e.IsDir()), append(matchers, m)
					if e.IsDir() {
						visit(rel, m)
					}
				}
			}
			visit("", nil)
			ignored := gitIgnored(run, paths)
			for i, p := range paths {
				if !assert.Equal(t, ignored[p], matchers[i].IgnoredWithParents(p, dirs[i]), "%q dir=%v", p, dirs[i]) {
					dumpIgnores(t, root, p)
				}
			}
		})
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// dumpIgnores logs the .gitignore files on the way to p, for a failure.
func dumpIgnores(t *testing.T, root *os.Root, p string) {
	dir := ""
	for _, part := range strings.Split(path.Dir(p), "/") {
		if data, err := root.ReadFile(path.Join(dir, ".gitignore")); err == nil {
			t.Logf("%s/.gitignore:\n%s", dir, data)
		}
		if part != "." {
			dir = path.Join(dir, part)
		}
	}
	if data, err := root.ReadFile(path.Join(dir, ".gitignore")); err == nil && dir != "" {
		t.Logf("%s/.gitignore:\n%s", dir, data)
	}
}
