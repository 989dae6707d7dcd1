package llmtoolkit_test

import (
	"context"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// A tool gives the model an image with Attach: Execute puts it on
// Result.Parts, after the text, and every wrapper passes it on.
func ExampleAttach() {
	chart := []byte("\x89PNG...") // the bytes of a PNG the tool drew
	tools := llmtoolkittest.NewFake(nil)
	tools.Add(llmtoolkit.MustTool("chart", "Draws the sales chart.", nil), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		llmtoolkit.Attach(ctx, llmtoolkit.ImagePart("image/png", chart))
		return "sales.png: image/png, 640x480 pixels", nil
	})
	res := llmtoolkit.Execute(context.Background(), llmtoolkit.Compose(tools), llmtoolkit.Call{ID: "1", Name: "chart"})
	fmt.Println(res.Content)
	for _, p := range res.Parts {
		fmt.Println(p)
	}
	// Output:
	// sales.png: image/png, 640x480 pixels
	// image (image/png, 7 bytes)
}
