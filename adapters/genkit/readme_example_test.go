package genkitadapter_test

import (
	"context"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	genkitadapter "github.com/llmtoolkit/llmtoolkit/adapters/genkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// The README's genkit snippet (examples/readme checks the copy): the code
// tools in a genkit generation.
func Example_readme() {
	ctx, dir, p := context.Background(), "path/to/project", "Greet gophers in greet.go."
	g := genkit.Init(ctx)
	// readme:begin generate
	ct, _ := codetools.New(dir)
	defer ct.Close()
	resp, err := genkit.Generate(ctx, g, ai.WithPrompt(p), ai.WithTools(genkitadapter.ToolRefs(ct)...))
	// readme:end
	_, _ = resp, err
}
