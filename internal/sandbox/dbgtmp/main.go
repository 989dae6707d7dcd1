package main

import (
	"fmt"
	"os"

	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

func main() {
	b, err := sandbox.ByName(os.Args[1])
	if err != nil {
		panic(err)
	}
	root, _ := os.MkdirTemp("", "dbgroot")
	tmp, _ := os.MkdirTemp("", "dbgtmp")
	mode := sandbox.WorkspaceWrite
	c, err := b.Command(sandbox.Spec{Path: "/usr/bin/bash", Args: []string{"-c", os.Args[2]}, Dir: root, Env: []string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmp}},
		sandbox.Policy{Mode: mode, Root: root, Tmp: tmp, Network: os.Getenv("NET") != ""})
	if err != nil {
		panic(err)
	}
	fmt.Fprintln(os.Stderr, c.Args)
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	err = c.Run()
	fmt.Println("err:", err, c.Fallback)
	os.RemoveAll(root)
	os.RemoveAll(tmp)
}
