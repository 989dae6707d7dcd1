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
	bashCleanEnv   bool          // only PATH and HOME of the minimal environment
	inheritEnv     []string      // names of host variables passed on
	inheritAll     bool          // pass the host's environment, less its secrets
	sandbox        SandboxPolicy // the OS sandbox of the commands
	requireSandbox bool          // New fails when the sandbox cannot run
	noContain      bool          // tests and benchmarks: no PID namespace, the scan alone
	bashTimeout    time.Duration // default timeout
	bashMaxTimeout time.Duration // largest timeout a call may ask for
	spillDir       string        // folder of the spill files; "" is the system temp folder
	spillMaxBytes  int64         // cap of one spill file
	spillMaxAge    time.Duration // spill files are removed this long after their command; 0: at Close
	spillMaxFiles  int           // spill files kept at most, oldest removed first

	// grep and glob
	grepMaxBytes int // cap of grep's and glob's answers in bytes

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
		spillMaxBytes:    defaultSpillMaxBytes,
		spillMaxFiles:    defaultSpillMaxFiles,
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
// commands, which start from a minimal one (see [WithInheritEnv]). Later
// values override earlier ones and the inherited ones.
func WithEnv(vars ...string) Option {
	return func(c *config) { c.part2.bashEnv = append(c.part2.bashEnv, vars...) }
}

// WithCleanEnv keeps only PATH and HOME of the host's environment (plus
// PWD, TMPDIR in a sandbox, and the variables of [WithEnv]), dropping even
// LANG and TERM. Commands no longer inherit the host's environment by
// default (see [WithInheritEnv]), so it is rarely needed.
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

// WithBashSpillDir sets the folder where bash keeps the output of commands
// that print more than it shows (the "spill files", named
// llmtoolkit-bash-*.log, readable by the host's user only). By default it is
// the system temp folder ([os.TempDir]); the folder is created if missing. A
// folder inside the root lets the model read the files with read_file and
// grep. The files are removed by [CodeTools.Close] and after the limits of
// [WithBashSpillRetention].
func WithBashSpillDir(dir string) Option {
	return func(c *config) { c.part2.spillDir = dir }
}

// WithBashSpillLimit caps each spill file at maxBytes (16 MiB unless set;
// at least 64 KiB). When a command prints more, the file keeps the first
// half of the cap and the last bytes of the output, with a marker line where
// the middle was cut, and the answer says so. While a cut file is put in
// order it briefly takes up to half the cap more. A value <= 0 keeps the
// current setting.
func WithBashSpillLimit(maxBytes int64) Option {
	return func(c *config) {
		if maxBytes > 0 {
			c.part2.spillMaxBytes = max(maxBytes, minSpillMaxBytes)
		}
	}
}

// WithBashSpillRetention limits how long bash's spill files are kept:
// maxAge after its command ended a file is removed (by default files stay
// until [CodeTools.Close]), and at most maxFiles are kept, the oldest
// removed first (16 unless set), so that their total size is bounded by
// maxFiles times the cap of [WithBashSpillLimit]. A zero value keeps the
// current setting.
func WithBashSpillRetention(maxAge time.Duration, maxFiles int) Option {
	return func(c *config) {
		if maxAge > 0 {
			c.part2.spillMaxAge = maxAge
		}
		if maxFiles > 0 {
			c.part2.spillMaxFiles = maxFiles
		}
	}
}

// WithGrepMaxBytes sets the largest answer grep and glob give, in bytes
// (50 KiB unless set). Hosts that post-process matches themselves may
// raise it.
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
