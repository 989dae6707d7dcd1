package otelkit

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmtoolkit/llmtoolkit"
)

// maxPartEvents caps the part events of one span; the rest are counted
// on the span (keyPartsOmitted).
const maxPartEvents = 64

// spanParts collects the parts a traced call attached
// ([llmtoolkit.Attach]): a span records, per part, an event with its
// kind, media type, size and SHA-256, never its bytes or text. Attach may
// call add from the tool's goroutines.
type spanParts struct {
	mu    sync.Mutex
	parts []llmtoolkit.Part
}

func (s *spanParts) add(parts []llmtoolkit.Part) {
	s.mu.Lock()
	s.parts = append(s.parts, parts...)
	s.mu.Unlock()
}

// record adds the events to span.
func (s *spanParts) record(span trace.Span, now time.Time) {
	if s == nil {
		return
	}
	s.mu.Lock()
	parts := s.parts
	s.parts = nil
	s.mu.Unlock()
	for i, p := range parts {
		if i == maxPartEvents {
			span.SetAttributes(keyPartsOmitted.Int(len(parts) - maxPartEvents))
			return
		}
		span.AddEvent(eventToolPart, trace.WithTimestamp(now), trace.WithAttributes(partAttributes(p)...))
	}
}

// partAttributes describe one part: kind, media type, bytes and the
// SHA-256 of its data, text or URL.
func partAttributes(p llmtoolkit.Part) []attribute.KeyValue {
	var sum [sha256.Size]byte
	switch {
	case p.Kind == llmtoolkit.PartText:
		sum = sha256.Sum256([]byte(p.Text))
	case p.URL != "":
		sum = sha256.Sum256([]byte(p.URL))
	default:
		sum = sha256.Sum256(p.Data)
	}
	attrs := []attribute.KeyValue{
		keyPartKind.String(string(p.Kind)),
		keyPartBytes.Int(p.Size()),
		keyPartSHA256.String(hex.EncodeToString(sum[:])),
	}
	if p.MediaType != "" {
		attrs = append(attrs, keyPartMediaType.String(p.MediaType))
	}
	return attrs
}
