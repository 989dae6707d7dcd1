package textutil

import (
	"bytes"
	"errors"
	"io"
)

// SniffLen is how much of a file's start is looked at to tell text from
// binary: a NUL byte in these first 8 KiB marks the file as binary.
const SniffLen = 8 << 10

// IsBinary reports whether head, a file's first bytes, holds a NUL byte in
// its first [SniffLen] bytes.
func IsBinary(head []byte) bool {
	if len(head) > SniffLen {
		head = head[:SniffLen]
	}
	return bytes.IndexByte(head, 0) >= 0
}

// ReadHead reads up to [SniffLen] bytes from r: a short file is not an
// error.
func ReadHead(r io.Reader) ([]byte, error) {
	buf := make([]byte, SniffLen)
	n, err := io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return buf[:n], err
	}
	return buf[:n], nil
}
