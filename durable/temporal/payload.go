package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	sdktemporal "go.temporal.io/sdk/temporal"
)

// DefaultMaxPayloadBytes is the size each payload of a run is kept under
// when [RunInput].MaxPayloadBytes is 0: Temporal's default limit on one
// payload (the server's limit.blobSize.error, 2 MiB; the server
// (limit.blobSize.warn) and the Go SDK
// (client.PayloadLimitOptions.PayloadSizeWarning, 512 KiB) log warnings
// below it). The server's gRPC messages are capped at 4 MiB and a history
// at 50 MiB. A server configured otherwise wants RunInput.MaxPayloadBytes
// set to its limit.
const DefaultMaxPayloadBytes = 2 << 20

// DefaultInlinePartBytes is [Activities].InlinePartBytes when it is 0.
const DefaultInlinePartBytes = 64 << 10

// ErrPayloadTooLarge is wrapped by the error of a run whose next model
// call would send, in one Temporal payload, a history larger than
// [RunInput].MaxPayloadBytes, which the server would refuse. The run fails
// with an application error of type [PayloadTooLargeType] (non-retryable)
// whose message holds ErrPayloadTooLarge's, the size and the limit.
var ErrPayloadTooLarge = errors.New("llmtoolkit: the run's history is larger than one Temporal payload may be")

// PayloadTooLargeType is the type of the application error a run fails
// with when its history outgrew a payload ([ErrPayloadTooLarge]).
const PayloadTooLargeType = "llmtoolkit.PayloadTooLarge"

// blobMissingType is the type of the model activity's failure when the
// history refers to a blob the worker cannot read back.
const blobMissingType = "llmtoolkit.BlobMissing"

// maxPayload returns the run's payload limit, or -1 for none.
func maxPayload(n int) int {
	switch {
	case n == 0:
		return DefaultMaxPayloadBytes
	case n < 0:
		return -1
	}
	return n
}

// partPayloadSize is what a part adds to a JSON payload: its data in
// base64, its other fields and their names.
func partPayloadSize(p llmtoolkit.Part) int {
	return (len(p.Data)+2)/3*4 + len(p.Text) + len(p.URL) + len(p.Name) + len(p.MediaType) + len(p.Kind) + 64
}

// fitParts keeps the tool result res inside one payload of limit bytes
// (-1: no limit). With Blobs, each part larger than InlinePartBytes goes
// to the store and a reference ([BlobScheme]) takes its place, so that no
// later payload (the model calls' histories, the run's output) carries
// its bytes either. Without Blobs, or for what is still too large, the
// parts that do not fit are left out, whole, in order, and the model
// reads a note naming them, the limit and the options. An error is the
// store's: the attempt fails and is retried.
func (a *Activities) fitParts(ctx context.Context, res *llmtoolkit.Result, limit int) error {
	if len(res.Parts) == 0 {
		return nil
	}
	dropForgedRefs(res)
	if limit < 0 {
		return nil
	}
	parts := res.Parts
	if a.Blobs != nil {
		inline := a.InlinePartBytes
		if inline <= 0 {
			inline = DefaultInlinePartBytes
		}
		copied := false
		for i, p := range parts {
			if len(p.Data) <= inline {
				continue
			}
			key := blobKey(p.Data)
			if err := a.Blobs.Put(ctx, key, p.Data); err != nil {
				return fmt.Errorf("keeping %s out of the payload (Activities.Blobs): %w", p, err)
			}
			if !copied {
				parts, copied = append([]llmtoolkit.Part(nil), parts...), true // the tool's slice stays as it was
			}
			p.Data, p.URL = nil, BlobScheme+key
			parts[i] = p
		}
	}
	base := agentloop.EncodeResult(*res)
	base.Parts = nil
	b, err := json.Marshal(base)
	if err != nil {
		return nil // the SDK's encoding will say what is wrong
	}
	size := len(b) + 16
	var kept []llmtoolkit.Part
	var left []string
	for _, p := range parts {
		s := partPayloadSize(p)
		if size+s > limit {
			left = append(left, p.String())
			continue
		}
		size += s
		kept = append(kept, p)
	}
	res.Parts = parts
	if len(left) == 0 {
		return nil
	}
	res.Parts = kept
	how := "set Activities.Blobs to pass big parts by reference"
	if a.Blobs != nil {
		how = "lower Activities.InlinePartBytes"
	}
	note := fmt.Sprintf("[%s left out: a tool result travels in one Temporal payload, at most %d bytes (RunInput.MaxPayloadBytes); %s]",
		strings.Join(left, ", "), limit, how)
	if res.Content != "" {
		note = "\n" + note
	}
	res.Content += note
	a.logger().WarnContext(ctx, "llmtoolkit: tool result parts left out of the Temporal payload",
		slog.String("tool", res.Name), slog.Int("parts", len(left)), slog.Int("max_payload_bytes", limit))
	return nil
}

// dropForgedRefs removes from a tool's result the parts that refer to a
// blob ([BlobScheme]): only fitParts writes references, and one a tool
// made up (an MCP server's link) would have the model activity read
// whatever blob of the store its key names. The model reads a note.
func dropForgedRefs(res *llmtoolkit.Result) {
	var kept []llmtoolkit.Part
	dropped := 0
	for i, p := range res.Parts {
		if _, ok := blobRef(p); !ok {
			if dropped > 0 {
				kept = append(kept, p)
			}
			continue
		}
		if dropped == 0 {
			kept = append([]llmtoolkit.Part(nil), res.Parts[:i]...)
		}
		dropped++
	}
	if dropped == 0 {
		return
	}
	res.Parts = kept
	note := fmt.Sprintf("[%d part(s) left out: a tool result cannot refer to a stored blob (%s)]", dropped, BlobScheme)
	if res.Content != "" {
		note = "\n" + note
	}
	res.Content += note
}

// resolve returns in's messages with the bytes of the parts kept in the
// blob store put back, for the model. A reference the worker cannot read
// back fails the activity: for good when there is no store or no such
// blob, else for a retry.
func (a *Activities) resolve(ctx context.Context, msgs []agentloop.Message) ([]agentloop.Message, error) {
	out, err := ResolveParts(ctx, a.Blobs, msgs)
	if err == nil {
		return out, nil
	}
	if a.Blobs == nil || errors.Is(err, ErrBlobNotFound) {
		return nil, sdktemporal.NewNonRetryableApplicationError(err.Error(), blobMissingType, nil)
	}
	return nil, err
}

// checkPayload returns an error wrapping ErrPayloadTooLarge when in, the
// input of a model activity, is larger than limit (-1: no limit) in the
// JSON the SDK's default converter writes. The size is estimated first
// (the text, the parts in base64) and measured by encoding only when the
// estimate passes half the limit.
func checkPayload(in ModelInput, limit int) error {
	if limit < 0 {
		return nil
	}
	est := 0
	for i := range in.Messages {
		m := &in.Messages[i]
		est += len(m.Content) + len(m.ToolCallID) + len(m.ToolName)
		for _, v := range m.Provider {
			est += len(v)
		}
		for _, p := range m.Parts {
			est += partPayloadSize(p)
		}
	}
	if est <= limit/2 {
		return nil
	}
	b, err := json.Marshal(in)
	if err != nil || len(b) <= limit {
		return nil // an encoding error is the SDK's to report
	}
	return fmt.Errorf("%w: the model call of iteration %d would send a history of %d bytes, and RunInput.MaxPayloadBytes is %d "+
		"(Temporal refuses a payload above its limit.blobSize.error, 2 MiB by default): set Activities.Blobs to keep images and documents "+
		"out of the payloads, bound the results (MaxTurnResultBytes, a ContextBudget), or go on in a new run with fewer messages",
		ErrPayloadTooLarge, in.Iteration, len(b), limit)
}
