package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// sandboxUsage is the part of mcp's and call's usage about --sandbox.
const sandboxUsage = `
By default (--sandbox auto) every bash command runs in an OS sandbox
where one works here (bubblewrap, else Landlock; --sandbox-backend picks
one), as workspace-write: it reads the system folders and DIR, writes only
DIR and a temporary folder of its own, holds no capability (as root, it
runs as the user nobody) and has no network unless --sandbox-network; the
network switch covers http_get too. Where no sandbox works, auto runs bash
unsandboxed and says so on stderr. --sandbox workspace-write or read-only
asks for that sandbox: if none can run here, the command fails instead of
running bash unsandboxed. --sandbox off opts out: bash then runs with this
process's rights (its processes are still contained). mcp prints on stderr,
at start, how bash runs. bash's commands never inherit this process's
environment beyond PATH, HOME, LANG and TERM (so not the OTEL_* headers or
API keys).
`

// sandboxFlags adds --sandbox, --sandbox-network and --sandbox-backend to
// fs; the returned function turns them into codetools options.
func sandboxFlags(fs *flag.FlagSet) func() ([]codetools.Option, error) {
	mode := fs.String("sandbox", "auto", "run bash in an OS sandbox: auto (workspace-write where one works), workspace-write, read-only or off")
	network := fs.Bool("sandbox-network", false, "let sandboxed commands and http_get use the network")
	backend := fs.String("sandbox-backend", "auto", "sandbox engine: auto, bubblewrap or landlock")
	return func() ([]codetools.Option, error) {
		if strings.EqualFold(strings.TrimSpace(*mode), "auto") {
			// Where a backend works; otherwise unsandboxed, logged and
			// shown (codetools does both), never an error.
			return []codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{
				Mode: codetools.SandboxWorkspaceWrite, Network: *network, Backend: *backend})}, nil
		}
		m, err := codetools.ParseSandboxMode(*mode)
		if err != nil {
			return nil, fmt.Errorf("--sandbox: %w (or auto)", err)
		}
		if m == codetools.SandboxOff {
			if *network || *backend != "auto" {
				return nil, fmt.Errorf("--sandbox-network and --sandbox-backend need a sandbox: --sandbox auto, workspace-write or read-only")
			}
			return nil, nil
		}
		return []codetools.Option{
			codetools.WithSandbox(codetools.SandboxPolicy{Mode: m, Network: *network, Backend: *backend}),
			codetools.WithSandboxRequired(),
		}, nil
	}
}
