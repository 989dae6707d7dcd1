//go:build !unix

package codetools

import (
	"errors"
	"testing"
)

func mksocket(testing.TB, string) error { return errors.New("not supported") }

func mkchardev(string) error { return errors.New("not supported") }
