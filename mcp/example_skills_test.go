package mcp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing/fstest"

	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/llmtoolkit/llmtoolkit/skills"
)

// A server serves its skills as MCP's skills extension (SEP-2640); a
// client loads them into a skills.Loader, and fetches a skill's SKILL.md,
// verified against the listing, only when the skill is activated.
func ExampleWithSkills() {
	ctx := context.Background()
	served := skills.NewLoader([]skills.Source{skills.FS("team", fstest.MapFS{
		"release-notes/SKILL.md": {Data: []byte("---\nname: release-notes\ndescription: Writes release notes from the git log.\n---\n\nRun git log since the last tag.\n")},
	})})
	srv := httptest.NewServer(mcp.Handler(&llmtoolkittest.Fake{}, mcp.WithSkills(served)))
	defer srv.Close()

	c, err := mcp.Connect(ctx, mcp.HTTPTransport(srv.URL, nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	set, err := skills.NewLoader([]skills.Source{c.Skills()}).Load(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(set.Index(0))
	answer, err := skills.NewTools(set).Activate(ctx, "release-notes")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(answer[:strings.Index(answer, "</skill_content>")+len("</skill_content>")])
	// Output:
	// <available_skills>
	// <skill name="release-notes">Writes release notes from the git log.</skill>
	// </available_skills>
	// <skill_content name="release-notes">
	// Run git log since the last tag.
	// </skill_content>
}
