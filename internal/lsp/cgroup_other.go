//go:build !linux

package lsp

import (
	"errors"
	"os/exec"
)

var errNoMemoryCgroup = errors.New("lsp: memory cgroups need Linux")

type memoryCgroup struct{}

func newMemoryCgroup(string, uint64) (*memoryCgroup, error) { return nil, errNoMemoryCgroup }

func (g *memoryCgroup) start(cmd *exec.Cmd) error { return cmd.Start() }

func (g *memoryCgroup) remove() {}
