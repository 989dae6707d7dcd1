package skills_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/skills"
)

// fakeRemote serves listings and files from memory, counting fetches.
type fakeRemote struct {
	listings []skills.Listing
	files    map[string]string
	mu       sync.Mutex
	fetched  []string
}

func (f *fakeRemote) ListSkills(context.Context) ([]skills.Listing, error) { return f.listings, nil }

func (f *fakeRemote) ReadSkillFile(_ context.Context, uri string, _ int64) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetched = append(f.fetched, uri)
	text, ok := f.files[uri]
	if !ok {
		return nil, fmt.Errorf("no file %s", uri)
	}
	return []byte(text), nil
}

const remoteDoc = "---\nname: pdf\ndescription: Reads PDF files.\n---\n\nBody.\n"

func listed(uri, text string) skills.ListedFile {
	return skills.ListedFile{URI: uri, Digest: skills.Digest([]byte(text)), Size: int64(len(text))}
}

func goodListing() skills.Listing {
	return skills.Listing{URI: "skill://pdf/SKILL.md",
		Frontmatter: map[string]any{"name": "pdf", "description": "Reads PDF files."},
		Files:       []skills.ListedFile{listed("skill://pdf/SKILL.md", remoteDoc), listed("skill://pdf/references/A.md", "a\n")}}
}

// TestRemoteListingRules: each listing that breaks a rule is refused with
// a message naming it, and the others load.
func TestRemoteListingRules(t *testing.T) {
	many := goodListing()
	for i := range skills.MaxManifestFiles {
		many.Files = append(many.Files, listed(fmt.Sprintf("skill://pdf/f%d", i), ""))
	}
	tests := []struct {
		name   string
		change func(*skills.Listing)
		want   string
	}{
		{"uri not a SKILL.md", func(l *skills.Listing) { l.URI = "skill://pdf/README.md" }, "must name the skill's SKILL.md"},
		{"file outside the folder", func(l *skills.Listing) { l.Files[1].URI = "skill://other/A.md" }, "outside the skill's folder"},
		{"dot-dot", func(l *skills.Listing) { l.Files[1].URI = "skill://pdf/../x/A.md" }, "outside"},
		{"listed twice", func(l *skills.Listing) { l.Files[1].URI = l.Files[0].URI }, "listed twice"},
		{"bad digest", func(l *skills.Listing) { l.Files[1].Digest = "md5:abc" }, "not sha256:"},
		{"uppercase digest", func(l *skills.Listing) { l.Files[1].Digest = strings.ToUpper(l.Files[1].Digest) }, "not sha256:"},
		{"negative size", func(l *skills.Listing) { l.Files[1].Size = -1 }, "has the size -1"},
		{"no SKILL.md entry", func(l *skills.Listing) { l.Files = l.Files[1:] }, "no entry of the SKILL.md"},
		{"too many files", func(l *skills.Listing) { *l = many }, "more than the 512 allowed"},
		{"name not the folder", func(l *skills.Listing) { l.Frontmatter["name"] = "other" }, `differs from its folder's name`},
		{"bad name", func(l *skills.Listing) { l.Frontmatter["name"] = "PDF" }, "only lowercase"},
		{"no description", func(l *skills.Listing) { delete(l.Frontmatter, "description") }, `field "description": is required`},
		{"unknown field", func(l *skills.Listing) { l.Frontmatter["evil"] = true }, "not a field of the specification"},
		{"huge frontmatter", func(l *skills.Listing) { l.Frontmatter["description"] = strings.Repeat("x", 40<<10) }, "more than the 32768 allowed"},
		{"no frontmatter", func(l *skills.Listing) { l.Frontmatter = nil }, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := goodListing()
			tt.change(&bad)
			other := goodListing()
			other.URI, other.Frontmatter["name"] = "skill://ok/SKILL.md", "ok"
			other.Files = []skills.ListedFile{listed("skill://ok/SKILL.md", "x")}
			r := &fakeRemote{listings: []skills.Listing{bad, other}}
			set, err := skills.NewLoader([]skills.Source{skills.FromRemote("peer", r)}).Load(context.Background())
			require.NoError(t, err)
			require.Len(t, set.Problems(), 1)
			assert.ErrorIs(t, set.Problems()[0], skills.ErrInvalid)
			assert.Contains(t, set.Problems()[0].Error(), tt.want)
			_, ok := set.Lookup("ok")
			assert.True(t, ok, "one bad listing hides no other")
			assert.Empty(t, r.fetched, "nothing fetched while loading")
		})
	}
}

func TestRemoteActivationVerifies(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		doc  string // served as the SKILL.md
		want string
	}{
		{"ok", remoteDoc, ""},
		{"digest", strings.Replace(remoteDoc, "Body.", "Evil.", 1), "has the digest"},
		{"size", remoteDoc + "more", "the listing says"},
		{"not a skill", "no frontmatter\n", "must start with YAML frontmatter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := goodListing()
			if tt.name == "not a skill" {
				ls.Files[0] = listed(ls.URI, tt.doc)
			}
			r := &fakeRemote{listings: []skills.Listing{ls}, files: map[string]string{ls.URI: tt.doc, "skill://pdf/references/A.md": "a\n"}}
			set, err := skills.NewLoader([]skills.Source{skills.FromRemote("peer", r)}).Load(ctx)
			require.NoError(t, err)
			tools := skills.NewTools(set)
			out, err := tools.Activate(ctx, "pdf")
			if tt.want == "" {
				require.NoError(t, err)
				assert.Contains(t, out, "Body.")
				return
			}
			require.ErrorIs(t, err, skills.ErrIntegrity)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "Evil")
			assert.Equal(t, []string{ls.URI}, r.fetched)
		})
	}
}

// TestRemoteVerifiedAcrossReloads: a loader that lists again before each
// use keeps a skill listed the same as it was, verified once; a changed
// listing is a new skill, to activate again.
func TestRemoteVerifiedAcrossReloads(t *testing.T) {
	ctx := context.Background()
	ls := goodListing()
	r := &fakeRemote{listings: []skills.Listing{ls}, files: map[string]string{ls.URI: remoteDoc, "skill://pdf/references/A.md": "a\n"}}
	loader := skills.NewLoader([]skills.Source{skills.FromRemote("peer", r)}, skills.WithReloadInterval(0))
	tools := skills.NewTools(loader)
	_, err := tools.Activate(ctx, "pdf")
	require.NoError(t, err)
	res, err := tools.Resolve(ctx, llmtoolkitCall("pdf", "references/A.md"))
	require.NoError(t, err)
	assert.Equal(t, "a\n", res)
	assert.Equal(t, []string{ls.URI, "skill://pdf/references/A.md"}, r.fetched, "the SKILL.md fetched once")

	changed := goodListing()
	changed.Files[1] = listed("skill://pdf/references/A.md", "b\n")
	r.listings = []skills.Listing{changed}
	_, err = tools.Resolve(ctx, llmtoolkitCall("pdf", "references/A.md"))
	require.ErrorContains(t, err, "activate the skill first")
}

func llmtoolkitCall(name, p string) llmtoolkit.Call {
	return llmtoolkit.Call{ID: "r", Name: skills.ReadResourceTool, Arguments: map[string]any{"name": name, "path": p}}
}
