package eino_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"

	eino "github.com/llmtoolkit/llmtoolkit/adapters/eino"
)

type cityArgs struct {
	City string `json:"city" jsonschema:"required,description=City name."`
}

// enhanced is an eino EnhancedInvokableTool answering text and an image.
type enhanced struct{}

func (enhanced) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "photo", Desc: "A photo.", ParamsOneOf: schema.NewParamsOneOfByParams(map[string]*schema.ParameterInfo{
		"city": {Type: schema.String, Desc: "City name.", Required: true},
	})}, nil
}

func (enhanced) InvokableRun(_ context.Context, a *schema.ToolArgument, _ ...tool.Option) (*schema.ToolResult, error) {
	return &schema.ToolResult{Parts: []schema.ToolOutputPart{
		{Type: schema.ToolPartTypeText, Text: "a photo of " + a.Text},
		{Type: schema.ToolPartTypeImage},
		{Type: schema.ToolPartTypeImage, Image: &schema.ToolOutputImage{MessagePartCommon: schema.MessagePartCommon{
			Base64Data: ptr("AAEC"), MIMEType: "image/png"}}},
		{Type: schema.ToolPartTypeFile, File: &schema.ToolOutputFile{MessagePartCommon: schema.MessagePartCommon{
			URL: ptr("https://example.com/a.pdf"), MIMEType: "application/pdf"}}},
	}}, nil
}

// infoOnly has no way to run.
type infoOnly struct{}

func (infoOnly) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "x"}, nil
}

func einoTools(t *testing.T) []tool.BaseTool {
	t.Helper()
	weather, err := utils.InferTool("weather", "Weather in a city.", func(_ context.Context, a cityArgs) (string, error) {
		if a.City == "Atlantis" {
			return "", errors.New("no such city")
		}
		return "sunny in " + a.City, nil
	})
	require.NoError(t, err)
	stream, err := utils.InferStreamTool("spell", "Spell a city.", func(_ context.Context, a cityArgs) (*schema.StreamReader[string], error) {
		parts := []string{}
		for _, r := range a.City {
			parts = append(parts, string(r)+".")
		}
		return schema.StreamReaderFromArray(parts), nil
	})
	require.NoError(t, err)
	halt, err := utils.InferTool("ask", "Asks the user.", func(ctx context.Context, a cityArgs) (string, error) {
		return "", compose.Interrupt(ctx, "which city?")
	})
	require.NoError(t, err)
	return []tool.BaseTool{weather, stream, enhanced{}, halt}
}

func TestResolverRunsEinoTools(t *testing.T) {
	ctx := context.Background()
	r, err := eino.Resolver(ctx, einoTools(t)...)
	require.NoError(t, err)

	names := []string{}
	for _, tl := range r.Tools() {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"weather", "spell", "photo", "ask"}, names)
	w, ok := r.LookupTool("weather")
	require.True(t, ok)
	assert.Equal(t, "Weather in a city.", w.Description)
	assert.Equal(t, []any{"city"}, w.Parameters["required"])

	tests := []struct {
		name, tool string
		args       map[string]any
		want       string
		isError    bool
		is         error
	}{
		{"invokable", "weather", map[string]any{"city": "Lisbon"}, "sunny in Lisbon", false, nil},
		{"tool error is a result", "weather", map[string]any{"city": "Atlantis"}, "no such city", true, nil},
		{"schema validated before eino", "weather", map[string]any{}, "city", true, llmtoolkit.ErrInvalidArguments},
		{"stream joined", "spell", map[string]any{"city": "Rio"}, "R.i.o.", false, nil},
		{"multimodal text kept, image noted", "photo", map[string]any{"city": "Oslo"}, `a photo of {"city":"Oslo"}` + "\n[1 non-text part(s)", false, nil},
		{"interrupt is an error result", "ask", map[string]any{"city": "x"}, "interrupt", true, eino.ErrInterrupted},
		{"unknown tool", "nosuch", map[string]any{}, "nosuch", true, llmtoolkit.ErrUnknownTool},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := llmtoolkit.Execute(ctx, r, llmtoolkit.Call{ID: "c1", Name: tc.tool, Arguments: tc.args})
			assert.Equal(t, tc.isError, res.IsError, res.Content)
			assert.Contains(t, res.Content, tc.want)
			if tc.is != nil {
				assert.ErrorIs(t, res.Err, tc.is)
			}
			if tc.tool == "photo" {
				assert.Equal(t, []llmtoolkit.Part{
					llmtoolkit.ImagePart("image/png", []byte{0, 1, 2}),
					{Kind: llmtoolkit.PartFile, MediaType: "application/pdf", URL: "https://example.com/a.pdf"},
				}, res.Parts, "images and files with data or a URL become parts")
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestResolverComposesWithLlmtoolkit(t *testing.T) {
	ctx := context.Background()
	r, err := eino.Resolver(ctx, einoTools(t)[0])
	require.NoError(t, err)
	c := llmtoolkit.Compose(r, staticResolver{llmtoolkit.MustTool("other", "o", map[string]any{"type": "object"})})
	assert.Equal(t, "sunny in Porto", llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "weather", Arguments: map[string]any{"city": "Porto"}}).Content)
	assert.Equal(t, "ran other", llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "other", Arguments: map[string]any{}}).Content)
}

func TestResolverRefusesBadTools(t *testing.T) {
	ctx := context.Background()
	w := einoTools(t)[0]
	tests := map[string]struct {
		tools []tool.BaseTool
		want  string
	}{
		"nil":       {[]tool.BaseTool{nil}, "nil"},
		"duplicate": {[]tool.BaseTool{w, w}, "twice"},
		"no run":    {[]tool.BaseTool{infoOnly{}}, "neither invoked nor streamed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := eino.Resolver(ctx, tc.tools...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestRoundTripBothWays: llmtoolkit tools into eino and back out keep their
// answers, failures included.
func TestRoundTripBothWays(t *testing.T) {
	ctx := context.Background()
	inner := domain(t, &seen{})
	tools, err := eino.Tools(ctx, inner)
	require.NoError(t, err)
	back, err := eino.Resolver(ctx, tools...)
	require.NoError(t, err)
	assert.Equal(t, "echo: hi", llmtoolkit.Execute(ctx, back, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "hi"}}).Content)
	res := llmtoolkit.Execute(ctx, back, llmtoolkit.Call{Name: "fail", Arguments: map[string]any{"text": "x"}})
	assert.Contains(t, res.Content, "disk on fire")
	res = llmtoolkit.Execute(ctx, back, llmtoolkit.Call{Name: "stop", Arguments: map[string]any{"text": "x"}})
	assert.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrHalt, "a halt keeps its meaning through both adapters")
}
