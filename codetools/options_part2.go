package codetools

import (
	"strings"
	"time"
)

// part2Config holds the settings of bash, grep, glob and http_get.
type part2Config struct {
	// bash
	shell          string        // "" finds bash, then sh
	bashEnv        []string      // KEY=VALUE added to the environment
	bashCleanEnv   bool          // start from an empty environment (plus PATH, HOME)
	bashTimeout    time.Duration // default timeout
	bashMaxTimeout time.Duration // largest timeout a call may ask for

	// grep and glob
	grepMaxBytes int // cap of grep's answer in bytes

	// http_get
	httpTimeout      time.Duration
	allowPrivate     bool            // let http_get reach loopback and private networks
	allowHosts       map[string]bool // host names (lower case) the network guard lets through
	httpMaxRedirects int
}

func defaultPart2Config() part2Config {
	return part2Config{
		bashTimeout:      120 * time.Second,
		bashMaxTimeout:   600 * time.Second,
		grepMaxBytes:     50 * 1024,
		httpTimeout:      30 * time.Second,
		httpMaxRedirects: 5,
	}
}

// WithShell sets the shell bash runs commands with (called as SHELL -c
// COMMAND). By default bash is looked up in PATH, then sh.
func WithShell(path string) Option {
	return func(c *config) { c.part2.shell = path }
}

// WithEnv adds variables, as "KEY=VALUE", to the environment of bash's
// commands. Later values override earlier ones and the inherited ones.
func WithEnv(vars ...string) Option {
	return func(c *config) { c.part2.bashEnv = append(c.part2.bashEnv, vars...) }
}

// WithCleanEnv starts bash's commands from an empty environment instead of
// the host's: only PATH and HOME are kept, plus the variables of [WithEnv].
// Use it to keep the host's secrets (API keys, tokens) from the commands.
func WithCleanEnv() Option {
	return func(c *config) { c.part2.bashCleanEnv = true }
}

// WithBashTimeout sets bash's default timeout (120 s unless set) and the
// largest one a call may ask for (600 s unless set). A zero value keeps the
// current setting.
func WithBashTimeout(def, maximum time.Duration) Option {
	return func(c *config) {
		if def > 0 {
			c.part2.bashTimeout = def
		}
		if maximum > 0 {
			c.part2.bashMaxTimeout = maximum
		}
		if c.part2.bashTimeout > c.part2.bashMaxTimeout {
			c.part2.bashTimeout = c.part2.bashMaxTimeout
		}
	}
}

// WithGrepMaxBytes sets the largest answer grep gives, in bytes (50 KiB
// unless set). Hosts that post-process matches themselves may raise it.
func WithGrepMaxBytes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.part2.grepMaxBytes = n
		}
	}
}

// WithHTTPTimeout sets http_get's timeout for a whole request, redirects
// and body included (30 s unless set).
func WithHTTPTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.part2.httpTimeout = d
		}
	}
}

// WithAllowPrivateNetworks lets http_get reach loopback, private,
// link-local and other non-public addresses, which its network guard
// refuses by default. Use it for intranets and tests.
func WithAllowPrivateNetworks() Option {
	return func(c *config) { c.part2.allowPrivate = true }
}

// WithAllowedHosts lets http_get reach the named hosts (as written in URLs,
// for example "wiki.internal" or "localhost") even when they resolve to
// non-public addresses. Every other host is still guarded.
func WithAllowedHosts(hosts ...string) Option {
	return func(c *config) {
		if c.part2.allowHosts == nil {
			c.part2.allowHosts = map[string]bool{}
		}
		for _, h := range hosts {
			c.part2.allowHosts[strings.ToLower(strings.TrimSuffix(h, "."))] = true
		}
	}
}
