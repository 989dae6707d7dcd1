package codetools

import (
	"context"
	"io"
)

// ctxReader is a reader that returns its context's error, once the context
// has ended, instead of reading: the loops of read_file and of http_get's
// conversion stop at their deadline whatever the data.
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
