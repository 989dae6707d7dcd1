package codetools

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBashGrepGlobHTTPGetDefinitions(t *testing.T) {
	t.Parallel()
	ct := newTools(t)
	var names []string
	for _, tool := range ct.Tools() {
		names = append(names, tool.Name)
	}
	require.GreaterOrEqual(t, len(names), 4)
	assert.Equal(t, []string{"bash", "grep", "glob", "http_get"}, names[len(names)-4:], "bash, grep, glob and http_get come last, in order")

	tests := []struct {
		name                             string
		required                         string
		readOnly, destructive, openWorld bool
	}{
		{"bash", "command", false, true, false},
		{"grep", "pattern", true, false, false},
		{"glob", "pattern", true, false, false},
		{"http_get", "url", true, false, true},
	}
	for _, tt := range tests {
		tool, ok := ct.LookupTool(tt.name)
		require.True(t, ok, tt.name)
		require.NoError(t, tool.Validate(), tt.name)
		assert.Greater(t, len(tool.Description), 300, "%s: an LLM-ready description", tt.name)
		require.NotNil(t, tool.Annotations, tt.name)
		assert.Equal(t, tt.readOnly, tool.Annotations.ReadOnly, tt.name)
		assert.Equal(t, tt.destructive, tool.Annotations.Destructive, tt.name)
		assert.Equal(t, tt.openWorld, tool.Annotations.OpenWorld, tt.name)
		assert.Equal(t, []any{tt.required}, tool.Parameters["required"], tt.name)
		for prop, schema := range tool.Parameters["properties"].(map[string]any) {
			assert.NotEmpty(t, schema.(map[string]any)["description"], "%s.%s has a description", tt.name, prop)
		}
		assert.Error(t, tool.ValidateArguments(map[string]any{}), "%s: %s is required", tt.name, tt.required)
	}
}

// TestDescriptionsSayWhatComesBack: the first sentence of a tool's
// description is all many models weigh when they pick a tool, so it names
// every kind of answer the tool gives (read_file's images and PDFs were
// once only in its fifth sentence, after "Read a text file.").
func TestDescriptionsSayWhatComesBack(t *testing.T) {
	t.Parallel()
	ct := newTools(t)
	tests := []struct {
		tool  string
		words []string
	}{
		{"read_file", []string{"return", "text", "image", "PDF"}},
		{"http_get", []string{"return", "web page or file"}},
		{"grep", []string{"return the matching lines"}},
		{"glob", []string{"list their paths"}},
		{"bash", []string{"return its output"}},
	}
	for _, tt := range tests {
		tool, ok := ct.LookupTool(tt.tool)
		require.True(t, ok, tt.tool)
		first, _, _ := strings.Cut(tool.Description, ". ")
		for _, w := range tt.words {
			assert.Contains(t, first, w, "%s: the first sentence says what comes back: %q", tt.tool, first)
		}
	}
}
