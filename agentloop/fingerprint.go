package agentloop

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/llmtoolkit/llmtoolkit"
)

// ToolFingerprint returns a hash of what a recorded call of t depends on:
// the tool's name, parameter schema, annotations, sensitive fields, path
// arguments and whether it is a recipe (not its description, which may
// carry the time of day). Two definitions with the same fingerprint take
// the same calls the same way.
//
// Durable engines record the fingerprints of a run's tools when the run
// starts and compare them when it goes on, in another process or on
// another worker, so that a run is never continued by an agent whose tools
// are not those its recorded calls were written for (durable/dbos and
// durable/temporal: ErrAgentChanged). It fails only for a schema without a
// JSON form.
func ToolFingerprint(t llmtoolkit.Tool) (string, error) {
	p := struct {
		Name            string                  `json:"name"`
		Parameters      map[string]any          `json:"parameters,omitempty"`
		Annotations     *llmtoolkit.Annotations `json:"annotations,omitempty"`
		SensitiveFields []string                `json:"sensitive_fields,omitempty"`
		Paths           []string                `json:"paths,omitempty"`
		Recipe          bool                    `json:"recipe,omitempty"`
	}{Name: t.Name, Parameters: t.Parameters, Annotations: t.Annotations, Recipe: t.Recipe != nil}
	p.SensitiveFields = slices.Sorted(slices.Values(t.SensitiveFields))
	if t.Paths != nil {
		p.Paths = slices.Sorted(slices.Values(append(slices.Clone(t.Paths.Names), t.Paths.Lists...)))
	}
	data, err := json.Marshal(p) // map keys sorted: the same schema gives the same text
	if err != nil {
		return "", fmt.Errorf("tool %q has no JSON form: %w", t.Name, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// ContextFingerprint returns a hash of what o's [Options.ContextBudget]
// and [ContextPolicy] do to a run's history, or "" when they do nothing
// (no budget and no spilling): the budget and the thresholds as Run
// applies them (ClearAt, KeepToolResults, CompactAt and KeepRecent with
// their defaults filled in, so a default spelled out hashes as left
// zero), whether Summarize is set (a function cannot be hashed: another
// summarizer is not seen, and a durable engine records each summary as a
// step), SpillBytes and, with it, SpillDir. SpillRoot (the host's folder:
// the model sees paths relative to it) and KeepSpillFiles (when files are
// removed) change no message and are left out.
//
// Durable engines fold it into the fingerprint of a run's agent, so that a
// run is not resumed under another policy, which would clear and compact
// the replayed history otherwise than the run did (durable/dbos:
// ErrAgentChanged).
func ContextFingerprint(o Options) string {
	if o.ContextBudget == 0 && o.ContextPolicy.SpillBytes == 0 {
		return ""
	}
	if d, err := o.withPolicyDefaults(); err == nil {
		o = d // invalid options are hashed as they are: Run refuses them
	}
	p := o.ContextPolicy
	v := struct {
		Budget          int    `json:"budget,omitempty"`
		ClearAt         int    `json:"clear_at,omitempty"`
		KeepToolResults int    `json:"keep_tool_results,omitempty"`
		CompactAt       int    `json:"compact_at,omitempty"`
		KeepRecent      int    `json:"keep_recent,omitempty"`
		Summarize       bool   `json:"summarize,omitempty"`
		SpillBytes      int    `json:"spill_bytes,omitempty"`
		SpillDir        string `json:"spill_dir,omitempty"`
	}{Budget: o.ContextBudget, SpillBytes: p.SpillBytes}
	if o.ContextBudget != 0 {
		v.ClearAt, v.KeepToolResults, v.CompactAt, v.KeepRecent = p.ClearAt, p.KeepToolResults, p.CompactAt, p.KeepRecent
		v.Summarize = p.Summarize != nil
	}
	if p.SpillBytes != 0 {
		v.SpillDir = filepath.ToSlash(filepath.Clean(p.SpillDir))
	}
	data, _ := json.Marshal(v) // ints, a bool and a string: it cannot fail
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
