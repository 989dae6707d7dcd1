package agentloop

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
		p.Paths = slices.Sorted(slices.Values(t.Paths.Names))
	}
	data, err := json.Marshal(p) // map keys sorted: the same schema gives the same text
	if err != nil {
		return "", fmt.Errorf("tool %q has no JSON form: %w", t.Name, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
