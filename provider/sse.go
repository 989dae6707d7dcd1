package provider

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrStreamTooLarge is wrapped by the errors of [ReadSSE] and of the stream
// accumulators when an event or the accumulated answer passes its cap.
var ErrStreamTooLarge = errors.New("provider: stream too large")

// Caps on what a stream may hold, so that a runaway or hostile stream ends
// in an error rather than in exhausted memory.
const (
	// MaxSSEEventBytes caps one server-sent event's data.
	MaxSSEEventBytes = 16 << 20
	// maxStreamBytes caps the text, arguments and blocks an accumulator
	// collects for one answer.
	maxStreamBytes = 64 << 20
)

// ReadSSE reads a server-sent events stream (the body of a streaming
// request to any of the three providers) and calls fn with each event's
// type (the "event:" field, "" when absent) and data (its "data:" lines
// joined by newlines), in order. Comments and events without data are
// skipped. It stops at the end of r, at ctx's end, at fn's first error
// (returned as is) or at an event larger than [MaxSSEEventBytes]. Pass the
// data to a stream accumulator's Add.
func ReadSSE(ctx context.Context, r io.Reader, fn func(event string, data []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxSSEEventBytes+1024)
	var event string
	var data bytes.Buffer
	dispatch := func() error {
		defer func() { event = ""; data.Reset() }()
		if data.Len() == 0 {
			return nil
		}
		return fn(event, bytes.TrimSuffix(data.Bytes(), []byte("\n")))
	}
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("provider: reading the stream: %w", err)
		}
		line := sc.Bytes()
		if len(line) == 0 {
			if err := dispatch(); err != nil {
				return err
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			event = string(value)
		case "data":
			if data.Len()+len(value) > MaxSSEEventBytes {
				return fmt.Errorf("%w: an event's data passes %d bytes", ErrStreamTooLarge, MaxSSEEventBytes)
			}
			data.Write(value)
			data.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%w: a line passes %d bytes", ErrStreamTooLarge, MaxSSEEventBytes)
		}
		return fmt.Errorf("provider: reading the stream: %w", err)
	}
	return dispatch()
}

// growth checks that adding n bytes to an accumulator holding total stays
// under the cap.
func growth(provider string, total *int, n int) error {
	*total += n
	if *total > maxStreamBytes {
		return fmt.Errorf("%w: %s: the answer passes %d bytes", ErrStreamTooLarge, provider, maxStreamBytes)
	}
	return nil
}
