//go:build !linux

package snapshot

import "context"

func (e *Engine) scan(context.Context, Blobs, bool) (Snapshot, error) {
	return Snapshot{}, ErrUnsupported
}

func (e *Engine) apply(context.Context, Blobs, []Change, []Change, [][]string) ([]Skipped, error) {
	return nil, ErrUnsupported
}
