package otelkit

import (
	"encoding/json"
	"strconv"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/redact"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// redacted is a call's arguments as they may be exported, and the secret
// values taken out of them, to scrub from the result and the error text.
type redacted struct {
	args    string // JSON, redacted and scrubbed, not yet capped
	secrets []string
}

// redactCall redacts a call's arguments as package trace does: a JSON copy
// in which the fields named by the tool's SensitiveFields and by
// WithRedactFields are Redacted, and the values taken out, as well as every
// URL's password, are scrubbed from every string.
func (c *config) redactCall(call llmtoolkit.Call, def llmtoolkit.Tool) redacted {
	args := map[string]any{}
	if len(call.Arguments) > 0 {
		data, err := json.Marshal(call.Arguments)
		if err == nil {
			err = json.Unmarshal(data, &args)
		}
		if err != nil {
			return redacted{args: `{"_error":"the arguments could not be encoded as JSON"}`}
		}
	}
	fields := redact.NewFields(def.SensitiveFields, c.fields)
	secrets := fields.Apply(args, Redacted)
	if call.Malformed != nil {
		// No decoded arguments: the values are found in the raw text the
		// error quotes.
		secrets = append(secrets, fields.Raw(call.Malformed.Raw)...)
	}
	redact.ScrubJSON(args, secrets, Redacted)
	data, err := json.Marshal(args)
	if err != nil { // a decoded JSON value always encodes
		return redacted{args: `{"_error":"the arguments could not be encoded as JSON"}`, secrets: secrets}
	}
	return redacted{args: string(data), secrets: secrets}
}

// scrub removes the call's secret values and every URL password from s,
// then caps it.
func (c *config) scrub(s string, secrets []string) string {
	return c.capText(redact.Scrub(s, secrets, Redacted))
}

// capText cuts s to the content cap on a UTF-8 boundary
// ([textutil.CutUTF8]), noting how many bytes were cut.
func (c *config) capText(s string) string {
	kept := textutil.CutUTF8(s, c.maxContent)
	if len(kept) == len(s) {
		return s
	}
	return kept + "…[" + strconv.Itoa(len(s)-len(kept)) + " bytes cut]"
}
