package codetools

import "time"

// bashConfig holds bash's settings, its sandbox's included.
type bashConfig struct {
	shell          string        // "" finds bash, then sh
	persistent     bool          // WithBashSession: bash is Anthropic's persistent bash_20250124
	bashEnv        []string      // KEY=VALUE added to the environment
	bashCleanEnv   bool          // only PATH and HOME of the minimal environment
	inheritEnv     []string      // names of host variables passed on
	inheritAll     bool          // pass the host's environment, less its secrets
	sandbox        SandboxPolicy // the OS sandbox of the commands
	session        bool          // WithSessionSandbox: one loopback network for every command
	requireSandbox bool          // New fails when the sandbox cannot run
	noContain      bool          // tests and benchmarks: no PID namespace, the scan alone
	bashTimeout    time.Duration // default timeout
	bashMaxTimeout time.Duration // largest timeout a call may ask for
	spillDir       string        // folder of the spill files; "" is the system temp folder
	spillMaxBytes  int64         // cap of one spill file
	spillMaxAge    time.Duration // spill files are removed this long after their command; 0: at Close
	spillMaxFiles  int           // spill files kept at most, oldest removed first
}

func defaultBashConfig() bashConfig {
	return bashConfig{
		bashTimeout:    120 * time.Second,
		bashMaxTimeout: 600 * time.Second,
		spillMaxBytes:  defaultSpillMaxBytes,
		spillMaxFiles:  defaultSpillMaxFiles,
	}
}

// WithBashShell sets the shell bash runs commands with (called as SHELL -c
// COMMAND). By default bash is looked up in PATH, then sh.
func WithBashShell(path string) Option {
	return func(c *config) { c.bash.shell = path }
}

// WithBashEnv adds variables, as "KEY=VALUE", to the environment of bash's
// commands, which start from a minimal one (see [WithBashInheritEnv]).
// Later values override earlier ones and the inherited ones.
func WithBashEnv(vars ...string) Option {
	return func(c *config) { c.bash.bashEnv = append(c.bash.bashEnv, vars...) }
}

// WithBashCleanEnv keeps only PATH and HOME of the host's environment
// (plus PWD, TMPDIR in a sandbox, and the variables of [WithBashEnv]),
// dropping even LANG and TERM. Commands no longer inherit the host's
// environment by default (see [WithBashInheritEnv]), so it is rarely
// needed.
func WithBashCleanEnv() Option {
	return func(c *config) { c.bash.bashCleanEnv = true }
}

// WithBashTimeout sets bash's default timeout (120 s unless set) and the
// largest one a call may ask for (600 s unless set). A zero value keeps the
// current setting.
func WithBashTimeout(def, maximum time.Duration) Option {
	return func(c *config) {
		if def > 0 {
			c.bash.bashTimeout = def
		}
		if maximum > 0 {
			c.bash.bashMaxTimeout = maximum
		}
		if c.bash.bashTimeout > c.bash.bashMaxTimeout {
			c.bash.bashTimeout = c.bash.bashMaxTimeout
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
	return func(c *config) { c.bash.spillDir = dir }
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
			c.bash.spillMaxBytes = max(maxBytes, minSpillMaxBytes)
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
			c.bash.spillMaxAge = maxAge
		}
		if maxFiles > 0 {
			c.bash.spillMaxFiles = maxFiles
		}
	}
}
