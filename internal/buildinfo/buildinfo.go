// Package buildinfo tells which version of the llmtoolkit module a binary
// was built with: the one lookup behind the MCP server's version (mcp) and
// the OpenTelemetry instrumentation scope's version (otelkit).
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// ModulePath is the core module's path.
const ModulePath = "github.com/llmtoolkit/llmtoolkit"

// Dev is the version of a build that records none: tests, go run, a
// module replaced by a local folder without a version.
const Dev = "dev"

// Version returns the llmtoolkit module version this binary was built
// with, or [Dev]. The build information is read once.
var Version = sync.OnceValue(func() string { return versionOf(debug.ReadBuildInfo()) })

// versionOf finds the core module's version in info: the main module's
// when it is the core, else the dependency's.
func versionOf(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return Dev
	}
	if info.Main.Path == ModulePath && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == ModulePath && d.Version != "" {
			return d.Version
		}
	}
	return Dev
}
