package otelkit

import (
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"

	"github.com/llmtoolkit/llmtoolkit"
)

// displayJob is the Display kind of codetools' calls on a background job
// or a terminal (codetools.DisplayJob); its payload's JSON keys are
// codetools.JobPayload's.
const displayJob = "job"

// The attributes of a call on a background job or a terminal, read from
// its "job" Display: which job, what the call did (start, read, write,
// stop), its state after the call, its exit code once ended.
const (
	keyJobID          = attribute.Key("llmtoolkit.job.id")
	keyJobEvent       = attribute.Key("llmtoolkit.job.event")
	keyJobState       = attribute.Key("llmtoolkit.job.state")
	keyJobExitCode    = attribute.Key("llmtoolkit.job.exit_code")
	keyJobTerminal    = attribute.Key("llmtoolkit.job.terminal")
	keyJobOutputBytes = attribute.Key("llmtoolkit.job.output_bytes")
)

// jobFacts is what a span records of a "job" Display's payload.
type jobFacts struct {
	Event       string `json:"event"`
	JobID       int    `json:"jobId"`
	State       string `json:"state"`
	ExitCode    int    `json:"exitCode"`
	Terminal    bool   `json:"terminal"`
	OutputBytes int64  `json:"outputBytes"`
}

// jobAttributes returns the job attributes of the call's Display, or nil
// when it showed none of kind "job" (or one that does not decode).
func jobAttributes(d llmtoolkit.Display, shown bool) []attribute.KeyValue {
	if !shown || d.Kind != displayJob || d.Payload == nil {
		return nil
	}
	data, err := json.Marshal(d.Payload)
	if err != nil {
		return nil
	}
	var f jobFacts
	if json.Unmarshal(data, &f) != nil || f.JobID == 0 {
		return nil
	}
	attrs := []attribute.KeyValue{
		keyJobID.Int(f.JobID), keyJobEvent.String(f.Event), keyJobState.String(f.State),
		keyJobTerminal.Bool(f.Terminal), keyJobOutputBytes.Int64(f.OutputBytes),
	}
	if f.State != "running" {
		attrs = append(attrs, keyJobExitCode.Int(f.ExitCode))
	}
	return attrs
}
