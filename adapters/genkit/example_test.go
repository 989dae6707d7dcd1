package genkitadapter_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/llmtoolkit/llmtoolkit"
	genkitadapter "github.com/llmtoolkit/llmtoolkit/adapters/genkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// A genkit generation, with genkit's own tool loop, edits a file with
// llmtoolkit's code tools. The model is a scripted fake defined with
// genkit.DefineModel: it reads the file, sends an edit with a missing
// argument (llmtoolkit's validation answers, and the generation goes on),
// then sends it right.
func Example() {
	dir, err := os.MkdirTemp("", "genkitadapter-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	err = os.WriteFile(filepath.Join(dir, "greet.go"), []byte("package greet\n\nconst Greeting = \"Hello, world!\"\n"), 0o644)
	if err != nil {
		log.Fatal(err)
	}
	ct, err := codetools.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer ct.Close()

	ctx := context.Background()
	g := genkit.Init(ctx)
	turns := []*ai.Message{
		{Role: ai.RoleModel, Content: []*ai.Part{ai.NewToolRequestPart(&ai.ToolRequest{
			Name: "read_file", Ref: "1", Input: map[string]any{"path": "greet.go", "offset": 3},
		})}},
		{Role: ai.RoleModel, Content: []*ai.Part{ai.NewToolRequestPart(&ai.ToolRequest{
			Name: "edit_file", Ref: "2", Input: map[string]any{"path": "greet.go", "oldText": "world"},
		})}},
		{Role: ai.RoleModel, Content: []*ai.Part{ai.NewToolRequestPart(&ai.ToolRequest{
			Name: "edit_file", Ref: "3", Input: map[string]any{"path": "greet.go", "oldText": "world", "newText": "gophers"},
		})}},
		ai.NewModelTextMessage("Done: the greeting now says hello to gophers."),
	}
	model := genkit.DefineModel(g, "example/scripted", &ai.ModelOptions{
		Supports: &ai.ModelSupports{Multiturn: true, Tools: true},
	}, func(ctx context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		turn := 0
		for _, m := range req.Messages {
			if m.Role == ai.RoleModel {
				turn++
			}
		}
		for _, p := range req.Messages[len(req.Messages)-1].Content {
			if p.IsToolResponse() {
				fmt.Printf("turn %d, %s read: %v\n", turn, p.ToolResponse.Name, p.ToolResponse.Output)
			}
		}
		return &ai.ModelResponse{Message: turns[turn], FinishReason: ai.FinishReasonStop}, nil
	})

	ctx = llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"user": "ada"} })
	resp, err := genkit.Generate(ctx, g,
		ai.WithModel(model),
		ai.WithPrompt("Greet gophers in greet.go."),
		ai.WithTools(genkitadapter.ToolRefs(ct)...),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Text())
	// Output:
	// turn 1, read_file read: const Greeting = "Hello, world!"
	// turn 2, edit_file read: map[error:invalid arguments for tool "edit_file": /: missing properties: 'newText' (add them)]
	// turn 3, edit_file read: Successfully replaced text in greet.go.
	//
	//  1 package greet
	//  2
	// -3 const Greeting = "Hello, world!"
	// +3 const Greeting = "Hello, gophers!"
	// Done: the greeting now says hello to gophers.
}
