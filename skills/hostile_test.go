package skills_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/skills"
)

// billionLaughs is the classic alias bomb, in YAML.
const billionLaughs = `---
name: bomb
description: d
metadata:
  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
  i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---
`

// Hostile files are refused with a clear reason, quickly, and the good
// skill beside them loads.
func TestHostileSkillFiles(t *testing.T) {
	many := func(s string, n int) string { return strings.Repeat(s, n) }
	cases := []struct {
		folder  string
		content []byte
		want    string
	}{
		{"huge", []byte(skillText("huge", "d") + many("x", skills.DefaultMaxSkillBytes)), "bytes, more than the 262144 allowed"},
		{"binary", append([]byte(skillText("binary", "d")), 0, 1, 2, 0xff), "the file is binary (a NUL byte at offset"},
		{"not-utf8", []byte(skillText("not-utf8", "d\xff\xfe")), "not valid UTF-8"},
		{"bomb", []byte(billionLaughs), "anchors are not allowed"},
		{"anchor", []byte("---\nname: &n anchor\ndescription: d\n---\n"), "anchors are not allowed"},
		{"merge-key", []byte("---\nname: merge-key\ndescription: d\nmetadata:\n  <<: {a: b}\n---\n"), "the YAML tag !!merge"},
		{"deep-flow", []byte("---\nname: deep-flow\ndescription: d\nmetadata: " + many("[", 5000) + many("]", 5000) + "\n---\n"), "nested more than 4 levels deep"},
		{"deep-block", []byte("---\nname: deep-block\ndescription: d\nmetadata:\n" + deepBlock(100) + "---\n"), "nested more than 4 levels deep"},
		{"wide", []byte("---\nname: wide\ndescription: d\nmetadata:\n" + wide(3000) + "---\n"), "more than 4096 YAML nodes"},
		{"big-frontmatter", []byte("---\nname: big-frontmatter\ndescription: d\nlicense: " + many("l", skills.MaxFrontmatterBytes) + "\n---\n"), "the frontmatter has"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		p := filepath.Join(dir, c.folder, "SKILL.md")
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, c.content, 0o644))
	}
	writeSkill(t, dir, "good", skillText("good", "Good."))
	start := time.Now()
	set := load(t, skills.Dir(dir))
	assert.Less(t, time.Since(start), 5*time.Second, "bounded work")
	assert.Equal(t, 1, set.Len())
	problems := map[string]string{}
	for _, p := range set.Problems() {
		msg := p.Error()
		for _, c := range cases {
			if strings.Contains(msg, "/"+c.folder+"/SKILL.md") {
				problems[c.folder] = msg
			}
		}
	}
	for _, c := range cases {
		t.Run(c.folder, func(t *testing.T) {
			msg, ok := problems[c.folder]
			require.True(t, ok, "%s is refused", c.folder)
			assert.Contains(t, msg, c.want)
			assert.Less(t, len(msg), 1024, "the error is short: %.200s", msg)
		})
	}
}

func deepBlock(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", 2*(i+1)) + "k:\n")
	}
	return b.String()
}

func wide(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("  k" + strconv.Itoa(i) + ": v\n")
	}
	return b.String()
}

// Links out of the skills folder are refused: a skill folder that is a
// link out, and a SKILL.md that is one.
func TestLinksOutOfTheSourceAreRefused(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeSkill(t, outside, "elsewhere", skillText("elsewhere", "Outside the source."))
	writeSkill(t, outside, "file-link", skillText("file-link", "Outside too."))
	require.NoError(t, os.Symlink(filepath.Join(outside, "elsewhere"), filepath.Join(dir, "elsewhere")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "file-link"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(outside, "file-link", "SKILL.md"), filepath.Join(dir, "file-link", "SKILL.md")))
	writeSkill(t, dir, "real", skillText("real", "Inside."))
	require.NoError(t, os.Symlink("real", filepath.Join(dir, "alias")))

	set := load(t, skills.Dir(dir))
	assert.Equal(t, 1, set.Len(), "only the skill inside loads")
	require.Len(t, set.Problems(), 3, "%v", set.Problems())
	text := ""
	for _, p := range set.Problems() {
		text += p.Error() + "\n"
	}
	assert.Contains(t, text, "elsewhere/SKILL.md")
	assert.Contains(t, text, "file-link/SKILL.md")
	assert.Contains(t, text, "escapes")
	assert.Contains(t, text, `alias/SKILL.md: field "name": "real" differs from its folder's name "alias"`)
}

// An alias without an anchor is refused too (the parser's error), and an
// alias of an anchor the frontmatter defines is refused by name.
func TestYAMLAliasesAreRefused(t *testing.T) {
	_, err := skills.Parse([]byte("---\nname: a\ndescription: *x\n---\n"), "a", "a/SKILL.md")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not valid YAML")
	_, err = skills.Parse([]byte("---\nname: a\nmetadata: {k: &x v}\ndescription: *x\n---\n"), "a", "a/SKILL.md")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "anchors are not allowed")
}
