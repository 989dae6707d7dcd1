package web

import (
	"context"
	"io"
)

// ctxReader is a reader that returns its context's error, once the context
// has ended, instead of reading: the HTML parser stops at the deadline
// whatever the page. (codetools' read_file has the same reader.)
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
