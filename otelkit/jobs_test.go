package otelkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// jobPayload has the JSON keys of codetools.JobPayload that the spans
// read (codetools' TestDisplayKeysAreDocumented pins them).
type jobPayload struct {
	Event       string `json:"event"`
	JobID       int    `json:"jobId"`
	Command     string `json:"command"`
	State       string `json:"state"`
	ExitCode    int    `json:"exitCode"`
	Terminal    bool   `json:"terminal"`
	OutputBytes int64  `json:"outputBytes"`
}

// TestJobSpans: a call on a background job or a terminal (its "job"
// Display) has the job's id, the event, its state, whether it is a
// terminal and its output's size on its span, and its exit code once it
// ended; typed payloads and decoded JSON alike; other calls have none.
func TestJobSpans(t *testing.T) {
	tel := newTelemetry(t)
	shows := map[string]llmtoolkit.Display{
		"bash":        {Kind: "job", Payload: jobPayload{Event: "start", JobID: 3, Command: "sleep 9", State: "running", OutputBytes: 5}},
		"job_kill":    {Kind: "job", Payload: map[string]any{"event": "stop", "jobId": 3.0, "state": "killed", "exitCode": 137.0, "outputBytes": 9.0}},
		"write_stdin": {Kind: "job", Payload: &jobPayload{Event: "write", JobID: 4, State: "exited", ExitCode: 0, Terminal: true}},
		"read_file":   {Kind: "file", Payload: map[string]any{"jobId": 1.0}},
	}
	var tools []llmtoolkit.Tool
	for name := range shows {
		tools = append(tools, llmtoolkit.MustTool(name, "A tool.", map[string]any{"type": "object"}))
	}
	r := llmtoolkit.Indexed(llmtoolkit.ResolverFunc(func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		llmtoolkit.Show(ctx, shows[call.Name])
		return "ok", nil
	}), tools)
	inst := otelkit.Instrument(r, tel.opts()...)
	for name := range shows {
		res := llmtoolkit.Execute(testContext(t), inst, llmtoolkit.Call{ID: name, Name: name})
		require.False(t, res.IsError, res.Content)
	}
	start := attrs(tel.span(t, "execute_tool bash"))
	assert.Equal(t, int64(3), start["llmtoolkit.job.id"])
	assert.Equal(t, "start", start["llmtoolkit.job.event"])
	assert.Equal(t, "running", start["llmtoolkit.job.state"])
	assert.Equal(t, int64(5), start["llmtoolkit.job.output_bytes"])
	assert.Equal(t, false, start["llmtoolkit.job.terminal"])
	assert.NotContains(t, start, "llmtoolkit.job.exit_code", "no exit code while it runs")

	stop := attrs(tel.span(t, "execute_tool job_kill"))
	assert.Equal(t, "stop", stop["llmtoolkit.job.event"])
	assert.Equal(t, "killed", stop["llmtoolkit.job.state"])
	assert.Equal(t, int64(137), stop["llmtoolkit.job.exit_code"])

	write := attrs(tel.span(t, "execute_tool write_stdin"))
	assert.Equal(t, int64(4), write["llmtoolkit.job.id"])
	assert.Equal(t, true, write["llmtoolkit.job.terminal"])
	assert.Equal(t, int64(0), write["llmtoolkit.job.exit_code"])

	for k := range attrs(tel.span(t, "execute_tool read_file")) {
		assert.NotContains(t, k, "llmtoolkit.job.", "another kind of Display")
	}
}
