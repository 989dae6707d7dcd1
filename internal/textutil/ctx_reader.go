package textutil

import (
	"context"
	"io"
)

// ContextReader returns a reader that reads r until ctx ends, then returns
// ctx's error instead of reading: a loop over text (read_file's scan, the
// HTML parser of http_get) stops at its deadline whatever the data.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
