package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuickstart(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	text := out.String()
	assert.Contains(t, text, "Tools offered this turn: lookup_ticket, read_file, grep, edit_file, bash")
	assert.Contains(t, text, "greet.go:10: \treturn \"Hi \" + name")
	assert.Contains(t, text, "Successfully replaced text in greet.go.")
	assert.Contains(t, text, "check: ok")
	assert.NotContains(t, text, "-> error", "every scripted call succeeds")
	assert.Contains(t, text, "Audit trail (tool_traces, newest first, 5 rows)")
	for _, tool := range []string{"lookup_ticket", "grep", "read_file", "edit_file", "bash"} {
		assert.True(t, strings.Contains(text, "  "+tool), "trace row for %s", tool)
	}
}
