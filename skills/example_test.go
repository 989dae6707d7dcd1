package skills_test

import (
	"context"
	"fmt"
	"testing/fstest"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/skills"
)

// A host loads its skills (here from an fs.FS; a project's folder would
// be skills.Dir(".claude/skills")), puts the index in its system prompt
// and gives the model the tools.
func Example() {
	builtin := fstest.MapFS{
		"release-notes/SKILL.md":            {Data: []byte("---\nname: release-notes\ndescription: Writes release notes. Use when asked for them.\n---\nRead references/STYLE.md, then write one line per change.\n")},
		"release-notes/references/STYLE.md": {Data: []byte("Imperative mood.\n")},
		"Broken/SKILL.md":                   {Data: []byte("---\nname: Broken\n---\n")},
	}
	loader := skills.NewLoader([]skills.Source{skills.FS("builtin", builtin)})
	set, err := loader.Load(context.Background())
	if err != nil {
		panic(err)
	}
	for _, p := range set.Problems() {
		fmt.Println("refused:", p)
	}
	fmt.Print(set.Index(0))

	tools := skills.NewTools(loader)
	res := llmtoolkit.Execute(context.Background(), tools, llmtoolkit.Call{Name: skills.ReadResourceTool,
		Arguments: map[string]any{"name": "release-notes", "path": "references/STYLE.md"}})
	fmt.Print(res.Content)
	// Output:
	// refused: builtin:Broken/SKILL.md: field "name": "Broken" holds 'B': only lowercase letters a-z, digits and hyphens are allowed
	// builtin:Broken/SKILL.md: field "description": is required
	// <available_skills>
	// <skill name="release-notes">Writes release notes. Use when asked for them.</skill>
	// </available_skills>
	// Imperative mood.
}
