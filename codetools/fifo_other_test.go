//go:build !unix

package codetools

import "errors"

func mkfifo(string) error { return errors.New("not supported") }
