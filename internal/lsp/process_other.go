//go:build !linux

package lsp

import (
	"errors"
	"os/exec"
)

func isolate(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func limitMemory(cmd *exec.Cmd, bytes uint64) error {
	if bytes == 0 {
		return nil
	}
	return errors.New("lsp: a memory limit needs Linux (RLIMIT_AS)")
}

func rss(pid int) (int64, error) { return 0, errors.New("lsp: RSS needs Linux") }

func rssTree(pid int) int64 { return 0 }
