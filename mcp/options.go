package mcp

import (
	"log/slog"
	"runtime/debug"
)

// Option configures a server ([NewServer], [Serve], [Handler]) or a client
// ([Connect]).
type Option func(*config)

type config struct {
	name         string
	version      string
	instructions string
	logger       *slog.Logger
	propagator   MetaPropagator // see WithPropagator
}

// WithName sets the implementation name announced to the peer: the
// server's name for [NewServer], the client's for [Connect]. The default is
// "llmtoolkit".
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithVersion sets the implementation version announced to the peer. The
// default is the llmtoolkit module version found in the build information,
// or "dev".
func WithVersion(version string) Option { return func(c *config) { c.version = version } }

// WithInstructions sets the instructions a server gives connected clients
// (how to use its tools). It has no effect on [Connect].
func WithInstructions(text string) Option { return func(c *config) { c.instructions = text } }

// WithLogger sets the logger for the SDK's session activity and for this
// package's warnings (for example a remote tool that [Connect] skips). The
// default is [slog.Default] for warnings and no SDK session logging.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

func newConfig(opts []Option) config {
	c := config{name: "llmtoolkit", version: moduleVersion()}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.name == "" {
		c.name = "llmtoolkit"
	}
	if c.version == "" {
		c.version = "dev"
	}
	return c
}

// warnLogger is where this package's own warnings go.
func (c config) warnLogger() *slog.Logger {
	if c.logger != nil {
		return c.logger
	}
	return slog.Default()
}

const modulePath = "github.com/llmtoolkit/llmtoolkit"

// moduleVersion returns the llmtoolkit module version this binary was
// built with, or "dev".
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if info.Main.Path == modulePath && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == modulePath && d.Version != "" {
			return d.Version
		}
	}
	return "dev"
}
