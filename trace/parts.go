package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
)

// maxPartDigests caps how many parts one row describes; the rest are
// counted ("parts_omitted").
const maxPartDigests = 64

// partDigests collects what a row records of a call's parts
// ([llmtoolkit.Result.Parts]): never their bytes or text, only each part's
// kind, media type, size and SHA-256. Attach may call add from the tool's
// goroutines.
type partDigests struct {
	mu      sync.Mutex
	list    []any
	omitted int
}

func (d *partDigests) add(parts []llmtoolkit.Part) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range parts {
		if len(d.list) == maxPartDigests {
			d.omitted++
			continue
		}
		d.list = append(d.list, partDigest(p))
	}
}

// partDigest is one part's entry in a row: {"kind", "media_type",
// "bytes", "sha256"} (the SHA-256 of its data, its text or its URL).
func partDigest(p llmtoolkit.Part) map[string]any {
	var sum [sha256.Size]byte
	switch {
	case p.Kind == llmtoolkit.PartText:
		sum = sha256.Sum256([]byte(p.Text))
	case p.URL != "":
		sum = sha256.Sum256([]byte(p.URL))
	default:
		sum = sha256.Sum256(p.Data)
	}
	m := map[string]any{"kind": cleanText(string(p.Kind)), "bytes": float64(p.Size()), "sha256": hex.EncodeToString(sum[:])}
	if p.MediaType != "" {
		m["media_type"] = cleanText(p.MediaType)
	}
	return m
}

// put adds the digests to a row's result JSON.
func (d *partDigests) put(res JSON) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.list) > 0 {
		res["parts"] = append([]any(nil), d.list...)
	}
	if d.omitted > 0 {
		res["parts_omitted"] = float64(d.omitted)
	}
}
