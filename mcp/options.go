package mcp

import (
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/buildinfo"
	"github.com/llmtoolkit/llmtoolkit/skills"
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

	maxToolPages    int           // see WithMaxToolPages
	maxTools        int           // see WithMaxTools
	maxSchemaNodes  int           // see WithMaxSchemaNodes
	maxAnswerBytes  int           // see WithMaxAnswerBytes
	idleTimeout     time.Duration // see WithSessionIdleTimeout
	maxSessions     int           // see WithMaxSessions
	stateless       bool          // see WithStateless
	retryAfter      time.Duration // see WithRetryAfter
	requestStateKey []byte        // see WithRequestStateKey
	serverOpts      *sdk.ServerOptions
	clientOpts      *sdk.ClientOptions
	auth            *AuthConfig            // see WithBearerAuth
	rateLimits      *RateLimits            // see WithRateLimits
	oauth           auth.OAuthHandler      // see WithOAuth
	origins         []string               // see WithAllowedOrigins
	originCheck     bool                   // see WithAllowedOrigins
	taskTools       map[string]TaskSupport // see WithTaskTools
	taskStore       TaskStore              // see WithTaskStore
	taskTTL         time.Duration          // see WithTaskTTL
	clientTasks     bool                   // see WithClientTasks
	skills          skills.Catalog         // see WithSkills
}

// DefaultSessionIdleTimeout is how long [Handler] keeps a session that
// receives no request: clients that leave without a DELETE (the TypeScript
// SDK's close() sends none) are forgotten after it.
const DefaultSessionIdleTimeout = 5 * time.Minute

// DefaultMaxSessions is how many live sessions [Handler] keeps at most.
const DefaultMaxSessions = 10000

// WithSessionIdleTimeout sets how long [Handler] keeps a session that
// receives no request before closing it (default
// [DefaultSessionIdleTimeout]); 0 or less means the default. It has no
// effect elsewhere.
func WithSessionIdleTimeout(d time.Duration) Option {
	return func(c *config) { c.idleTimeout = d }
}

// WithMaxSessions caps the live sessions of [Handler] (default
// [DefaultMaxSessions]; 0 or less means the default): a client that opens
// one more is answered 503 Service Unavailable with a Retry-After, and the
// refusal is logged. It has no effect elsewhere.
func WithMaxSessions(n int) Option { return func(c *config) { c.maxSessions = n } }

// WithStateless makes [Handler] serve legacy clients (those of protocol
// versions before [CurrentProtocolVersion], which open a session with
// initialize) without sessions too: each request is answered on its own,
// as the current protocol's are, so any number of replicas can serve them
// behind a round-robin load balancer with no session affinity.
//
// What a legacy client loses, since no session outlives its request: the
// server cannot send it requests of its own (sampling, elicitation and
// roots through the session), nor notifications outside a call's answer
// (a tool list that changed, log messages after the call); it cannot open
// the GET stream (answered 405) nor resume an interrupted answer; the log
// level it sets is not kept. What a call reports while it runs (progress)
// still reaches it, on the call's own answer. Clients of the current
// protocol are served the same with or without it. It has no effect
// elsewhere.
func WithStateless() Option { return func(c *config) { c.stateless = true } }

// WithRetryAfter sets the Retry-After a shutting-down [Handler] sends with
// its 503 answers ([HTTPHandler.Shutdown]; default [DefaultRetryAfter],
// rounded to whole seconds, at least 1). Zero or less means the default.
// It has no effect elsewhere.
func WithRetryAfter(d time.Duration) Option { return func(c *config) { c.retryAfter = d } }

// WithRequestStateKey sets the key with which a server signs the state a
// tool remembers across an input-required round trip ([InputRequired]),
// so that a client cannot forge or alter it: a call that comes back with
// a state not signed by it is answered with an invalid-params error
// ([ErrRequestState]) and the tool is not called. Replicas behind one load
// balancer must share the key, since the call may come back to another;
// the default is a random key per server, good for one process. Use 32
// random bytes. It has no effect on [Connect].
func WithRequestStateKey(key []byte) Option {
	return func(c *config) { c.requestStateKey = append([]byte(nil), key...) }
}

// WithServerOptions passes the official SDK's server options to
// [NewServer], [Serve] and [Handler]: handlers for subscriptions,
// completions, progress, logging and the rest. This package's own settings
// win where they overlap: the instructions ([WithInstructions]), the logger
// ([WithLogger]) and the tools capability are set over the given ones. The
// options are copied, not kept.
func WithServerOptions(o *sdk.ServerOptions) Option {
	return func(c *config) { c.serverOpts = o }
}

// WithClientOptions passes the official SDK's client options to [Connect]:
// elicitation and sampling handlers, notification handlers and the rest.
// The options are copied, not kept; a logger set with [WithLogger] is set
// over theirs. A ProgressNotificationHandler given still gets every
// notification, after the client has passed those of its calls on to their
// callers (see [Client.Resolve]).
func WithClientOptions(o *sdk.ClientOptions) Option {
	return func(c *config) { c.clientOpts = o }
}

// Default bounds of a client's tool listing (see [Client.Refresh]).
const (
	DefaultMaxToolPages   = 100
	DefaultMaxTools       = 1000
	DefaultMaxSchemaNodes = llmtoolkit.DefaultMaxSchemaNodes
)

// WithMaxToolPages bounds the pages of tools/list a client reads in one
// [Connect] or [Client.Refresh] (default [DefaultMaxToolPages]); past it
// the listing fails with [ErrListLimit]. Zero or less means the default.
// It has no effect on a server.
func WithMaxToolPages(n int) Option { return func(c *config) { c.maxToolPages = n } }

// WithMaxTools bounds the tools a client accepts in one listing, every
// tool sent counted (default [DefaultMaxTools]); past it the listing fails
// with [ErrListLimit]. Zero or less means the default. It has no effect on
// a server.
func WithMaxTools(n int) Option { return func(c *config) { c.maxTools = n } }

// WithMaxSchemaNodes bounds the complexity of a remote tool's input
// schema, measured by [llmtoolkit.Tool.SchemaNodes] (the schema's size
// with every reference expanded; default [DefaultMaxSchemaNodes]). A
// tool above it is skipped with a warning naming it and its size, like a
// tool whose schema does not compile. Zero or less means the default. It
// has no effect on a server.
func WithMaxSchemaNodes(n int) Option { return func(c *config) { c.maxSchemaNodes = n } }

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
	c := config{name: "llmtoolkit", version: buildinfo.Version()}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.maxToolPages <= 0 {
		c.maxToolPages = DefaultMaxToolPages
	}
	if c.maxTools <= 0 {
		c.maxTools = DefaultMaxTools
	}
	if c.maxAnswerBytes <= 0 {
		c.maxAnswerBytes = DefaultMaxAnswerBytes
	}
	if c.maxSchemaNodes <= 0 {
		c.maxSchemaNodes = DefaultMaxSchemaNodes
	}
	if c.name == "" {
		c.name = "llmtoolkit"
	}
	if c.version == "" {
		c.version = "dev"
	}
	if c.idleTimeout <= 0 {
		c.idleTimeout = DefaultSessionIdleTimeout
	}
	if c.taskTTL <= 0 {
		c.taskTTL = DefaultTaskTTL
	}
	if c.retryAfter <= 0 {
		c.retryAfter = DefaultRetryAfter
	}
	if c.maxSessions <= 0 {
		c.maxSessions = DefaultMaxSessions
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
