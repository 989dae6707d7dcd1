package genkitadapter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	genkitadapter "github.com/llmtoolkit/llmtoolkit/adapters/genkit"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"description=the city"`
	Days int    `json:"days,omitempty"`
}

type weatherOut struct {
	City string `json:"city"`
	Sky  string `json:"sky"`
}

func genkitTools() []ai.Tool {
	weather := ai.NewTool("weather", "Tells the weather.", func(_ *ai.ToolContext, in weatherIn) (weatherOut, error) {
		if in.City == "Atlantis" {
			return weatherOut{}, errors.New("no station in Atlantis")
		}
		return weatherOut{City: in.City, Sky: "clear"}, nil
	})
	greet := ai.NewTool("greet", "Greets.", func(_ *ai.ToolContext, in struct {
		Name string `json:"name"`
	}) (string, error) {
		return "hello " + in.Name, nil
	})
	confirm := ai.NewTool("confirm", "Asks a human.", func(tc *ai.ToolContext, _ struct{}) (string, error) {
		return "", tc.Interrupt(&ai.InterruptOptions{Metadata: map[string]any{"question": "sure?"}})
	})
	photo := ai.NewMultipartTool("photo", "Takes a photo.", func(_ *ai.ToolContext, _ struct{}) (*ai.MultipartToolResponse, error) {
		return &ai.MultipartToolResponse{Output: "taken", Content: []*ai.Part{
			ai.NewTextPart("a cat"), ai.NewMediaPart("image/png", "data:image/png;base64,AAAA"),
		}}, nil
	})
	return []ai.Tool{weather, greet, confirm, photo}
}

func TestFromTools(t *testing.T) {
	r, err := genkitadapter.FromTools(genkitTools()...)
	require.NoError(t, err)
	require.Len(t, r.Tools(), 4)
	def, ok := llmtoolkit.FindTool(r, "weather")
	require.True(t, ok)
	assert.Equal(t, "Tells the weather.", def.Description)
	assert.Contains(t, def.Parameters["properties"], "city")

	ctx := context.Background()
	tests := []struct {
		name    string
		call    llmtoolkit.Call
		content string
		isError bool
		err     error
	}{
		{"structured output as JSON", llmtoolkit.Call{Name: "weather", Arguments: map[string]any{"city": "Oslo"}}, `{"city":"Oslo","sky":"clear"}`, false, nil},
		{"string output as is", llmtoolkit.Call{Name: "greet", Arguments: map[string]any{"name": "Ada"}}, "hello Ada", false, nil},
		{"invalid arguments refused by llmtoolkit", llmtoolkit.Call{Name: "weather", Arguments: map[string]any{"city": 3}}, "city", true, llmtoolkit.ErrInvalidArguments},
		{"tool error as error result", llmtoolkit.Call{Name: "weather", Arguments: map[string]any{"city": "Atlantis"}}, "no station in Atlantis", true, nil},
		{"interrupt as error result", llmtoolkit.Call{Name: "confirm", Arguments: map[string]any{}}, "sure?", true, genkitadapter.ErrInterrupted},
		{"media parts become parts", llmtoolkit.Call{Name: "photo", Arguments: map[string]any{}}, "taken\na cat", false, nil},
		{"unknown tool", llmtoolkit.Call{Name: "nope", Arguments: map[string]any{}}, "nope", true, llmtoolkit.ErrUnknownTool},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := llmtoolkit.Execute(ctx, r, tc.call)
			assert.Equal(t, tc.isError, res.IsError, res.Content)
			if tc.isError {
				assert.Contains(t, res.Content, tc.content)
			} else {
				assert.Equal(t, tc.content, res.Content)
			}
			if tc.err != nil {
				assert.ErrorIs(t, res.Err, tc.err)
			}
			if tc.call.Name == "photo" {
				assert.Equal(t, []llmtoolkit.Part{llmtoolkit.ImagePart("image/png", []byte{0, 0, 0})}, res.Parts, "the data URL is decoded")
			}
		})
	}
}

func TestFromToolsRefusesBadDefinitions(t *testing.T) {
	ok := ai.NewTool("greet", "Greets.", func(_ *ai.ToolContext, _ struct{}) (string, error) { return "", nil })
	tests := []struct {
		name  string
		tools []ai.Tool
		want  string
	}{
		{"provider name", []ai.Tool{ai.NewTool("acme/greet", "Greets.", func(_ *ai.ToolContext, _ struct{}) (string, error) { return "", nil })}, `"acme/greet"`},
		{"empty description", []ai.Tool{ai.NewTool("quiet", "", func(_ *ai.ToolContext, _ struct{}) (string, error) { return "", nil })}, `"quiet"`},
		{"duplicate", []ai.Tool{ok, ok}, `two genkit tools are named "greet"`},
		{"nil", []ai.Tool{nil}, "tool 0 is nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := genkitadapter.FromTools(tc.tools...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A genkit tool brought into a Resolver and handed back to genkit runs in
// a Generate through llmtoolkit: both directions compose.
func TestFromToolsBackIntoGenkit(t *testing.T) {
	r, err := genkitadapter.FromTools(genkitTools()...)
	require.NoError(t, err)
	tools := genkitadapter.Tools(r)
	require.Len(t, tools, 4)
	out, err := tools[0].RunRaw(context.Background(), map[string]any{"city": "Atlantis"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"error": "no station in Atlantis"}, out)
}
