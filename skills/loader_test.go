package skills_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/skills"
)

// writeSkill writes dir/name/SKILL.md and returns its path.
func writeSkill(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name, "SKILL.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func skillText(name, desc string, extra ...string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n" + strings.Join(extra, "\n") + "\n---\nInstructions of " + name + ".\n"
}

func load(t *testing.T, sources ...skills.Source) *skills.Set {
	t.Helper()
	set, err := skills.NewLoader(sources).Load(t.Context())
	require.NoError(t, err)
	return set
}

// Every skill of testdata/valid loads, with no problem, each field read
// as written.
func TestLoadValidSkills(t *testing.T) {
	entries, err := os.ReadDir("testdata/valid")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(entries), 20)
	set := load(t, skills.Dir("testdata/valid"))
	assert.Empty(t, set.Problems())
	require.Equal(t, len(entries), set.Len())
	var names []string
	for _, sk := range set.Skills() {
		names = append(names, sk.Name)
		assert.Equal(t, filepath.Base(sk.Dir), sk.Name)
		assert.True(t, filepath.IsAbs(sk.Location), sk.Location)
		assert.Equal(t, "testdata/valid", sk.Source)
	}
	assert.True(t, sort.StringsAreSorted(names), "sorted by name")

	get := func(name string) skills.Skill {
		sk, ok := set.Lookup(name)
		require.True(t, ok, name)
		return sk
	}
	pdf := get("pdf-processing")
	assert.Equal(t, "Extract PDF text, fill forms, merge files. Use when handling PDFs.", pdf.Description)
	assert.Equal(t, "Apache-2.0", pdf.License)
	assert.Equal(t, "Requires poppler-utils (pdftotext) on the PATH", pdf.Compatibility)
	assert.Equal(t, map[string]string{"author": "example-org", "version": "1.0"}, pdf.Metadata)
	assert.Equal(t, []string{"Bash(pdftotext:*)", "Read"}, pdf.AllowedTools)
	assert.True(t, strings.HasPrefix(pdf.Instructions, "# PDF processing\n\nRun"), pdf.Instructions)

	assert.Len(t, get(strings.Repeat("a-b", 1)+strings.Repeat("-b", 30)+"c").Name, 64)
	assert.Equal(t, 1024, len([]rune(get("long-description").Description)))
	assert.Len(t, get("long-compatibility").Compatibility, 500)
	assert.Equal(t, map[string]string{"version": "1.0", "stable": "true", "released": "2026-01-15", "empty": "", "quoted": "a: b"}, get("metadata-values").Metadata)
	assert.Equal(t, map[string]string{}, get("empty-metadata").Metadata)
	assert.Nil(t, get("null-metadata").Metadata)
	assert.Equal(t, map[string]string{"author": "someone", "tier": "2"}, get("flow-metadata").Metadata)
	assert.Equal(t, "", get("frontmatter-only").Instructions)
	assert.Equal(t, "Body with CRLF.", get("crlf-endings").Instructions)
	assert.Equal(t, "Written on Windows, with CRLF line endings.", get("crlf-endings").Description)
	assert.Equal(t, "BOM.", get("byte-order-mark").Instructions)
	assert.Equal(t, "A description written as a folded block scalar, over two lines.\n", get("folded-description").Description)
	assert.Equal(t, "A description written as a literal block,\nkeeping its line break.\n", get("literal-description").Description)
	assert.Equal(t, "Use this skill when: the user asks about colons in YAML", get("quoted-colon").Description)
	assert.Equal(t, "It's quoted with single quotes.", get("single-quoted").Description)
	assert.Equal(t, "comments-and-spaces", get("comments-and-spaces").Name)
	assert.Equal(t, "2024", get("2024").Name)
	assert.Equal(t, "Proprietary. LICENSE.txt has complete terms", get("bundled-license").License)
}

// Each invalid SKILL.md is refused with an error naming its file and the
// field at fault; the valid skill beside them loads.
func TestInvalidSkills(t *testing.T) {
	long := func(n int) string { return strings.Repeat("d", n) }
	cases := []struct {
		folder, content string
		field, want     string // want: a part of the error
	}{
		{"no-frontmatter", "# Just Markdown\n", "", "must start with YAML frontmatter"},
		{"unclosed", "---\nname: unclosed\ndescription: d\n", "", "must start with YAML frontmatter"},
		{"missing-name", "---\ndescription: d\n---\n", "name", "is required"},
		{"missing-description", "---\nname: missing-description\n---\n", "description", "is required"},
		{"empty-frontmatter", "---\n---\n", "name", "is required"},
		{"Upper-Case", skillText("Upper-Case", "d"), "name", "only lowercase letters a-z, digits and hyphens"},
		{"-leading", skillText("-leading", "d"), "name", "starts or ends with a hyphen"},
		{"trailing-", skillText("trailing-", "d"), "name", "starts or ends with a hyphen"},
		{"double--hyphen", skillText("double--hyphen", "d"), "name", "two hyphens in a row"},
		{"under_score", skillText("under_score", "d"), "name", "only lowercase letters"},
		{"café", skillText("café", "d"), "name", "only lowercase letters"},
		{strings.Repeat("n", 65), skillText(strings.Repeat("n", 65), "d"), "name", "has 65 characters, more than 64"},
		{"folder-name", skillText("other-name", "d"), "name", `differs from its folder's name "folder-name"`},
		{"empty-name", "---\nname: \"\"\ndescription: d\n---\n", "name", "is empty"},
		{"name-list", "---\nname: [a]\ndescription: d\n---\n", "name", "must be text, not a list"},
		{"empty-description", skillText("empty-description", `"  "`), "description", "is empty"},
		{"null-description", skillText("null-description", "~"), "description", "is empty"},
		{"long-description", skillText("long-description", long(1025)), "description", "has 1025 characters, more than 1024"},
		{"description-map", skillText("description-map", "{a: b}"), "description", "must be text, not a mapping"},
		{"long-compat", skillText("long-compat", "d", "compatibility: "+long(501)), "compatibility", "has 501 characters, more than 500"},
		{"empty-compat", skillText("empty-compat", "d", `compatibility: ""`), "compatibility", "is empty"},
		{"empty-license", skillText("empty-license", "d", "license:"), "license", "is empty"},
		{"license-map", skillText("license-map", "d", "license: {spdx: MIT}"), "license", "must be text, not a mapping"},
		{"metadata-list", skillText("metadata-list", "d", "metadata: [a, b]"), "metadata", "must be a mapping of text keys to text values, not a list"},
		{"metadata-nested", skillText("metadata-nested", "d", "metadata:\n  author:\n    name: x"), "metadata.author", "must be text, not a mapping"},
		{"metadata-dup", skillText("metadata-dup", "d", "metadata:\n  a: x\n  a: y"), "metadata.a", "is given twice"},
		{"metadata-text", skillText("metadata-text", "d", "metadata: v1"), "metadata", "not a scalar"},
		{"unknown-field", skillText("unknown-field", "d", "version: 1.0"), "version", "is not a field of the specification"},
		{"dup-field", skillText("dup-field", "d", "description: again"), "description", "is given twice"},
		{"tools-list", skillText("tools-list", "d", "allowed-tools: [Read, Bash]"), "allowed-tools", "must be text, not a list"},
		{"tools-empty", skillText("tools-empty", "d", `allowed-tools: " "`), "allowed-tools", "is empty"},
		{"top-list", "---\n- name\n- description\n---\n", "", "must be a YAML mapping of fields, not a list"},
		{"bad-yaml", "---\nname: bad-yaml\ndescription: [unclosed\n---\n", "", "is not valid YAML"},
		{"tab-indent", "---\nname: tab-indent\n\tdescription: d\n---\n", "", "is not valid YAML"},
		{"binary-tag", skillText("binary-tag", "!!binary aGVsbG8="), "", "the YAML tag !!binary"},
		{"custom-tag", skillText("custom-tag", "!evil d"), "", "the YAML tag !evil"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		writeSkill(t, dir, c.folder, c.content)
	}
	writeSkill(t, dir, "good", skillText("good", "A good skill among bad ones."))
	set := load(t, skills.Dir(dir))
	require.Equal(t, 1, set.Len(), "only the good skill loads")
	_, ok := set.Lookup("good")
	require.True(t, ok)

	byFile := map[string]error{}
	for _, p := range set.Problems() {
		assert.ErrorIs(t, p, skills.ErrInvalid)
		var ve *skills.ValidationError
		require.True(t, errors.As(p, &ve), "%v", p)
		byFile[ve.File] = p
	}
	require.Len(t, byFile, len(cases))
	for _, c := range cases {
		t.Run(c.folder, func(t *testing.T) {
			file := filepath.Join(evalDir(t, dir), c.folder, "SKILL.md")
			err := byFile[file]
			require.Error(t, err, "no problem for %s", file)
			assert.Contains(t, err.Error(), file, "the error names the file")
			assert.Contains(t, err.Error(), c.want)
			if c.field != "" {
				assert.Contains(t, err.Error(), `field "`+c.field+`"`)
			}
		})
	}
}

func evalDir(t *testing.T, dir string) string {
	d, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	return d
}

// A file with several faults has each named.
func TestEveryViolationIsNamed(t *testing.T) {
	_, err := skills.Parse([]byte("---\nname: Bad--Name\ndescription: \"\"\ncompatibility: "+strings.Repeat("c", 600)+"\nextra: 1\n---\n"), "bad", "bad/SKILL.md")
	require.Error(t, err)
	for _, want := range []string{`field "name"`, `field "description": is empty`, `field "compatibility": has 600 characters`, `field "extra": is not a field`} {
		assert.Contains(t, err.Error(), want)
	}
}

// Sources in order: a name given twice is kept from the first source, the
// other is a problem; a reserved name (a tool's) is refused; an fs.FS
// source loads like a folder.
func TestSourcesAndCollisions(t *testing.T) {
	project, user := t.TempDir(), t.TempDir()
	writeSkill(t, project, "review", skillText("review", "The project's review."))
	writeSkill(t, user, "review", skillText("review", "The user's review."))
	writeSkill(t, user, "bash", skillText("bash", "A skill named like a tool."))
	writeSkill(t, user, "notes", skillText("notes", "The user's notes."))
	embedded := fstest.MapFS{
		"notes/SKILL.md":             {Data: []byte(skillText("notes", "Embedded notes."))},
		"embedded-only/SKILL.md":     {Data: []byte(skillText("embedded-only", "Only embedded."))},
		"embedded-only/references/a": {Data: []byte("ref a")},
		"not-a-skill/README.md":      {Data: []byte("no SKILL.md here")},
	}
	set, err := skills.NewLoader([]skills.Source{skills.Dir(project), skills.Dir(user), skills.FS("builtin", embedded), skills.Dir(filepath.Join(project, "missing"))},
		skills.WithReservedNames("bash", "read_file")).Load(t.Context())
	require.NoError(t, err)
	var names []string
	for _, sk := range set.Skills() {
		names = append(names, sk.Name)
	}
	assert.Equal(t, []string{"embedded-only", "notes", "review"}, names)
	review, _ := set.Lookup("review")
	assert.Equal(t, "The project's review.", review.Description)
	notes, _ := set.Lookup("notes")
	assert.Equal(t, "The user's notes.", notes.Description)
	emb, _ := set.Lookup("embedded-only")
	assert.Equal(t, "builtin:embedded-only/SKILL.md", emb.Location)
	assert.Empty(t, emb.Dir)
	data, err := emb.ReadResource(t.Context(), "references/a", 0)
	require.NoError(t, err)
	assert.Equal(t, "ref a", string(data))

	var msgs []string
	for _, p := range set.Problems() {
		assert.ErrorIs(t, p, skills.ErrNameTaken)
		msgs = append(msgs, p.Error())
	}
	require.Len(t, msgs, 3, "%q", msgs)
	joined := strings.Join(msgs, "\n")
	assert.Contains(t, joined, `"bash" is the name of one of the host's tools`)
	assert.Contains(t, joined, filepath.Join(evalDir(t, user), "review", "SKILL.md")+`: skill "review" is shadowed by `+filepath.Join(evalDir(t, project), "review", "SKILL.md"))
	assert.Contains(t, joined, `builtin:notes/SKILL.md: skill "notes" is shadowed by`)
}

// Load reads again only what changed: an edited SKILL.md is read again,
// a new one appears, a removed one goes, a file that turns invalid becomes
// a problem and the others stay.
func TestReloadOnChange(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir, "one", skillText("one", "First version."))
	writeSkill(t, dir, "two", skillText("two", "Two."))
	l := skills.NewLoader([]skills.Source{skills.Dir(dir)}, skills.WithReloadInterval(0))
	set := l.Current(t.Context())
	require.Equal(t, 2, set.Len())

	writeSkill(t, dir, "one", skillText("one", "Second version, longer."))
	writeSkill(t, dir, "three", skillText("three", "Three."))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "two")))
	set = l.Current(t.Context())
	one, ok := set.Lookup("one")
	require.True(t, ok)
	assert.Equal(t, "Second version, longer.", one.Description)
	_, ok = set.Lookup("two")
	assert.False(t, ok)
	_, ok = set.Lookup("three")
	assert.True(t, ok)

	// Same size, a new time: read again.
	p := writeSkill(t, dir, "three", skillText("three", "Thr3e."))
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(p, future, future))
	set = l.Current(t.Context())
	three, _ := set.Lookup("three")
	assert.Equal(t, "Thr3e.", three.Description)

	writeSkill(t, dir, "one", "---\nname: one\n---\n")
	set = l.Current(t.Context())
	assert.Equal(t, 1, set.Len())
	require.Len(t, set.Problems(), 1)
	assert.Contains(t, set.Problems()[0].Error(), `field "description": is required`)
}

// Within the reload interval Current keeps its last scan.
func TestReloadInterval(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir, "one", skillText("one", "One."))
	l := skills.NewLoader([]skills.Source{skills.Dir(dir)}, skills.WithReloadInterval(time.Hour))
	require.Equal(t, 1, l.Current(t.Context()).Len())
	writeSkill(t, dir, "two", skillText("two", "Two."))
	assert.Equal(t, 1, l.Current(t.Context()).Len(), "within the interval")
	set, err := l.Load(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, set.Len(), "Load scans on demand")
}

// WithLogger logs each problem once, at Warn, however many scans see it.
func TestProblemsLoggedOnce(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, dir, "bad", "---\nname: bad\n---\n")
	var buf strings.Builder
	l := skills.NewLoader([]skills.Source{skills.Dir(dir)}, skills.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	for range 3 {
		_, err := l.Load(t.Context())
		require.NoError(t, err)
	}
	assert.Equal(t, 1, strings.Count(buf.String(), "level=WARN msg=\"skill refused\""), buf.String())
	assert.Contains(t, buf.String(), `field \"description\": is required`)
}
