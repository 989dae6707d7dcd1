package skills_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/skills"
)

// FuzzParse: Parse never panics; what it refuses is a list of
// ValidationErrors naming the file; what it accepts follows every rule.
func FuzzParse(f *testing.F) {
	f.Add([]byte(skillText("a", "d")), "a")
	f.Add([]byte(billionLaughs), "bomb")
	f.Add([]byte("---\nname: x\ndescription: y\nmetadata: {a: [b]}\n---\nbody"), "x")
	f.Add([]byte("---\r\nname: x\r\ndescription: |\n  y\n---"), "x")
	f.Fuzz(func(t *testing.T, data []byte, folder string) {
		sk, err := skills.Parse(data, folder, "f/SKILL.md")
		if err != nil {
			require.ErrorIs(t, err, skills.ErrInvalid)
			var ve *skills.ValidationError
			require.True(t, errors.As(err, &ve))
			require.True(t, strings.HasPrefix(err.Error(), "f/SKILL.md: "), err.Error())
			return
		}
		require.True(t, skills.ValidName(sk.Name), sk.Name)
		if folder != "" {
			require.Equal(t, folder, sk.Name)
		}
		require.NotEmpty(t, strings.TrimSpace(sk.Description))
		require.LessOrEqual(t, utf8.RuneCountInString(sk.Description), skills.MaxDescriptionLength)
		require.LessOrEqual(t, utf8.RuneCountInString(sk.Compatibility), skills.MaxCompatibilityLength)
		require.True(t, utf8.ValidString(sk.Instructions))
	})
}

// FuzzRemoteListing: a peer's listing (its JSON, as package mcp decodes
// it) never panics the loader; what is accepted follows the rules, and
// activating it fetches only the listed SKILL.md, kept only when it is
// the listed bytes.
func FuzzRemoteListing(f *testing.F) {
	f.Add(`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf","description":"Reads PDF files."}}`, remoteDoc)
	f.Add(`{"uri":"skill://a/b/pdf/SKILL.md","frontmatter":{"name":"pdf","description":"d","metadata":{"v":1.5,"x":[1,{"a":null}]}}}`, remoteDoc)
	f.Add(`{"uri":"x://../SKILL.md","frontmatter":{"name":"..","description":"&a [*a, *a]"}}`, "---\nname: ..\n---\n")
	f.Fuzz(func(t *testing.T, entry, doc string) {
		var ls skills.Listing
		if json.Unmarshal([]byte(entry), &ls) != nil {
			return
		}
		ls.Files = []skills.ListedFile{listed(ls.URI, doc)}
		r := &fakeRemote{listings: []skills.Listing{ls}, files: map[string]string{ls.URI: doc}}
		set, err := skills.NewLoader([]skills.Source{skills.FromRemote("peer", r)}).Load(context.Background())
		require.NoError(t, err)
		require.Empty(t, r.fetched, "nothing fetched while loading")
		for _, p := range set.Problems() {
			require.ErrorIs(t, p, skills.ErrInvalid)
		}
		for _, sk := range set.Skills() {
			require.True(t, skills.ValidName(sk.Name), sk.Name)
			require.True(t, strings.HasSuffix(ls.URI, "/"+sk.Name+"/SKILL.md") || strings.HasSuffix(ls.URI, "://"+sk.Name+"/SKILL.md"), ls.URI)
			out, err := skills.NewTools(set).Activate(context.Background(), sk.Name)
			if err == nil {
				require.Contains(t, out, "<skill_content")
			}
			require.LessOrEqual(t, len(r.fetched), 1)
		}
	})
}
