package agentresolver_test

import (
	"context"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
)

type screenshotArgs struct {
	URL string `json:"url" jsonschema:"the page to capture"`
}

// A typed function gives the model an image with llmtoolkit.Attach on
// the context it is given; its string is the text beside it.
func ExampleFunc_attach() {
	shoot := func(ctx context.Context, a screenshotArgs) (string, error) {
		png := []byte("\x89PNG...") // the capture's bytes
		llmtoolkit.Attach(ctx, llmtoolkit.ImagePart("image/png", png))
		return "screenshot of " + a.URL, nil
	}
	r, err := agentresolver.New(agentresolver.Func("screenshot", "Captures a web page.", shoot, agentresolver.WithReadOnly()))
	if err != nil {
		panic(err)
	}
	res := llmtoolkit.Execute(context.Background(), r, llmtoolkit.Call{ID: "1", Name: "screenshot", Arguments: map[string]any{"url": "https://example.com"}})
	fmt.Println(res.Content)
	fmt.Println(res.Parts[0])
	// Output:
	// screenshot of https://example.com
	// image (image/png, 7 bytes)
}
