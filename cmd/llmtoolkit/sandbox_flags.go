package main

import (
	"flag"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// sandboxUsage is the part of mcp's and call's usage about --sandbox.
const sandboxUsage = `
With --sandbox workspace-write or read-only, every bash command runs in an
OS sandbox (bubblewrap, else Landlock; --sandbox-backend picks one): it
reads the system folders and DIR, writes only DIR (not under read-only)
and a private temporary folder, and has no network unless
--sandbox-network. If no sandbox can run here, the command fails instead
of running bash unsandboxed. bash's commands never inherit this process's
environment beyond PATH, HOME, LANG and TERM (so not the OTEL_* headers or
API keys).
`

// sandboxFlags adds --sandbox, --sandbox-network and --sandbox-backend to
// fs; the returned function turns them into codetools options.
func sandboxFlags(fs *flag.FlagSet) func() ([]codetools.Option, error) {
	mode := fs.String("sandbox", "off", "run bash in an OS sandbox: workspace-write, read-only or off")
	network := fs.Bool("sandbox-network", false, "let sandboxed commands use the network")
	backend := fs.String("sandbox-backend", "auto", "sandbox engine: auto, bubblewrap or landlock")
	return func() ([]codetools.Option, error) {
		m, err := codetools.ParseSandboxMode(*mode)
		if err != nil {
			return nil, fmt.Errorf("--sandbox: %w", err)
		}
		if m == codetools.SandboxOff {
			if *network || *backend != "auto" {
				return nil, fmt.Errorf("--sandbox-network and --sandbox-backend need --sandbox workspace-write or read-only")
			}
			return nil, nil
		}
		return []codetools.Option{
			codetools.WithSandbox(codetools.SandboxPolicy{Mode: m, Network: *network, Backend: *backend}),
			codetools.WithSandboxRequired(),
		}, nil
	}
}
