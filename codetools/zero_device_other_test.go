//go:build !linux

package codetools

import "errors"

// mknodZero is not attempted outside Linux.
func mknodZero(string) error { return errors.New("not supported") }
