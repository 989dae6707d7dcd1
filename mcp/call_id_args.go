package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// callIDDigestBytes is how much of the arguments' SHA-256 a bound call ID
// carries: 64 bits, in hex.
const callIDDigestBytes = 8

// boundCallID binds the call ID a client gave under [CallIDMetaKey] to the
// call's arguments: the ID, "#", and the first 16 hex digits of the
// SHA-256 of the arguments in canonical JSON (keys sorted, as
// encoding/json writes a map). A retry (the same ID, the same arguments)
// keeps its ID, so trace.WithIdempotentCalls still keeps one completed
// row for it; a different call sent under a reused ID gets another, so it
// cannot hide behind the first one's row. An empty id stays empty.
func boundCallID(id string, args map[string]any) string {
	if id == "" {
		return ""
	}
	if args == nil {
		args = map[string]any{}
	}
	canonical, err := json.Marshal(args)
	if err != nil { // decoded JSON always encodes; never share a digest
		return id
	}
	sum := sha256.Sum256(canonical)
	return id + "#" + hex.EncodeToString(sum[:callIDDigestBytes])
}
