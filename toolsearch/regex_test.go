package toolsearch_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
)

// TestRegexPerField: over catalog2, a pattern is matched against each
// field on its own (anchors hold in each), alternations, classes and
// case work as RE2 says, and each answer names the fields it matched.
func TestRegexPerField(t *testing.T) {
	ix := toolsearch.NewIndex(catalogFileTools(t, "catalog2.json"))
	for _, c := range []struct {
		pattern string
		want    []string // the tools found, in order; nil: the first ones only
		first   string   // the first tool, when want is nil
		fields  []string // the first tool's matched fields
		none    bool     // nothing matches
	}{
		{pattern: `^kubectl_scale$`, want: []string{"kubectl_scale"}, fields: []string{toolsearch.FieldName}},
		{pattern: `_merge_request$`, want: []string{"gitlab_accept_merge_request", "gitlab_create_merge_request"}, fields: []string{toolsearch.FieldName}},
		{pattern: `^KUBECTL_SCALE$`, want: []string{"kubectl_scale"}, fields: []string{toolsearch.FieldName}},
		{pattern: `^(redis_get|redis_set)$`, want: []string{"redis_get", "redis_set"}, fields: []string{toolsearch.FieldName}},
		{pattern: `^aws_ec2_(start|stop)_instances$`, want: []string{"aws_ec2_stop_instances", "aws_ec2_start_instances"}, fields: []string{toolsearch.FieldName}},
		{pattern: `^replicas$`, want: []string{"kubectl_scale"}, fields: []string{toolsearch.FieldArgumentName}},
		{pattern: `^Number of replicas$`, want: []string{"kubectl_scale"}, fields: []string{toolsearch.FieldArgumentDescription}},
		{pattern: `^Scale a Kubernetes`, want: []string{"kubectl_scale"}, fields: []string{toolsearch.FieldDescription}},
		{pattern: `^stripe_create_[a-z]+_intent$`, want: []string{"stripe_create_payment_intent"}, fields: []string{toolsearch.FieldName}},
		{pattern: `^gcal_\w+_event$`, want: []string{"gcal_create_event", "gcal_update_event", "gcal_delete_event"}, fields: []string{toolsearch.FieldName}},
		{pattern: `refund`, first: "stripe_create_refund", fields: []string{toolsearch.FieldName, toolsearch.FieldDescription, toolsearch.FieldArgumentDescription}},
		{pattern: `^(reason|merge_method)$`, want: []string{"stripe_create_refund", "github_merge_pull_request"}, fields: []string{toolsearch.FieldArgumentName}},
		{pattern: `scale$`, want: []string{"kubectl_scale"}, fields: []string{toolsearch.FieldName}},
		{pattern: `^scale`, want: []string{"kubectl_scale"}, fields: []string{toolsearch.FieldDescription}},
		{pattern: `^kubernetes$`, none: true},
		{pattern: `^slack_post_message\ndescription`, none: true},
	} {
		t.Run(c.pattern, func(t *testing.T) {
			got, err := ix.Search(context.Background(), c.pattern, toolsearch.Regex, 10)
			require.NoError(t, err)
			if c.none {
				assert.Empty(t, got)
				return
			}
			require.NotEmpty(t, got)
			var names []string
			for _, m := range got {
				names = append(names, m.Tool.Name)
			}
			if c.want != nil {
				assert.ElementsMatch(t, c.want, names)
			} else {
				assert.Equal(t, c.first, names[0])
			}
			assert.Equal(t, c.fields, got[0].Fields)
		})
	}
}

// TestRegexAnswerNamesFields: in regex mode, tool_search's answer says
// where the pattern matched each tool, in both exposures.
func TestRegexAnswerNamesFields(t *testing.T) {
	fake := &lt.Fake{}
	ok := func(_ context.Context, c llmtoolkit.Call) (string, error) { return "", nil }
	for _, tool := range catalogFileTools(t, "catalog2.json") {
		fake.Add(tool, ok)
	}
	call := llmtoolkit.Call{Name: toolsearch.SearchToolName, Arguments: map[string]any{"query": "^replicas$"}}
	res := llmtoolkit.Execute(t.Context(), toolsearch.New(fake, toolsearch.WithMode(toolsearch.Regex)), call)
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "- kubectl_scale: Scale a Kubernetes deployment or stateful set to a number of replicas. (matched in: argument name)")
	res = llmtoolkit.Execute(t.Context(), toolsearch.New(fake, toolsearch.WithMode(toolsearch.Regex), toolsearch.WithProxy()), call)
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, `"matched_in":["argument name"]`)
}

// TestSearchToolsDocumentTheirArguments: tool_search (in both modes) and
// call_tool name each of their arguments and show a sample call in their
// descriptions, so that a model has nothing to guess.
func TestSearchToolsDocumentTheirArguments(t *testing.T) {
	fake := &lt.Fake{}
	for _, mode := range []toolsearch.Mode{toolsearch.BM25, toolsearch.Regex} {
		tools := toolsearch.New(fake, toolsearch.WithMode(mode), toolsearch.WithProxy()).Tools()
		require.Len(t, tools, 2)
		for _, tool := range tools {
			props, _ := tool.Parameters["properties"].(map[string]any)
			require.NotEmpty(t, props, tool.Name)
			for name := range props {
				assert.Contains(t, tool.Description, `"`+name+`"`, "%s (%s) does not name %s", tool.Name, mode, name)
			}
			assert.Contains(t, tool.Description, "Example: {", "%s (%s)", tool.Name, mode)
		}
	}
}
