package otelkit_test

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
	"github.com/llmtoolkit/llmtoolkit/skills"
)

// TestSkillActivationSpans: a skill's activation and a resource read,
// refused or not, are each one execute_tool span, like any tool's call.
func TestSkillActivationSpans(t *testing.T) {
	tel := newTelemetry(t)
	set, err := skills.NewLoader([]skills.Source{skills.FS("builtin", fstest.MapFS{
		"notes/SKILL.md":        {Data: []byte("---\nname: notes\ndescription: Takes notes.\n---\nWrite them down.\n")},
		"notes/references/a.md": {Data: []byte("a")},
	})}).Load(testContext(t))
	require.NoError(t, err)
	r := otelkit.Instrument(skills.NewTools(set), tel.opts()...)
	ctx := testContext(t)
	require.NoError(t, llmtoolkit.Execute(ctx, r, llmtoolkit.Call{ID: "a", Name: skills.ActivateTool, Arguments: map[string]any{"name": "notes"}}).Err)
	require.NoError(t, llmtoolkit.Execute(ctx, r, llmtoolkit.Call{ID: "b", Name: skills.ReadResourceTool, Arguments: map[string]any{"name": "notes", "path": "references/a.md"}}).Err)
	require.Error(t, llmtoolkit.Execute(ctx, r, llmtoolkit.Call{ID: "c", Name: skills.ReadResourceTool, Arguments: map[string]any{"name": "notes", "path": "../x"}}).Err)
	spans := tel.spans()
	require.Len(t, spans, 3, "%v", names(spans))
	assert.Equal(t, skills.ActivateTool, attrs(spans[0])["gen_ai.tool.name"])
	assert.Equal(t, skills.ReadResourceTool, attrs(spans[1])["gen_ai.tool.name"])
	assert.Equal(t, "Error", spans[2].Status.Code.String())
}
