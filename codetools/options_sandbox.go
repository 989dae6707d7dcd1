package codetools

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
	"github.com/llmtoolkit/llmtoolkit/internal/web"
)

// SandboxMode says what bash's commands may write when they run in an OS
// sandbox (see [WithSandbox]).
type SandboxMode = sandbox.Mode

const (
	// SandboxOff runs commands without a sandbox (the default). They are
	// still contained: none of their processes outlives the call where
	// the kernel gives a PID namespace.
	SandboxOff = sandbox.Off
	// SandboxWorkspaceWrite lets commands read the system folders and the
	// root, and write only the root and a private temporary folder.
	SandboxWorkspaceWrite = sandbox.WorkspaceWrite
	// SandboxReadOnly lets commands write only their private temporary
	// folder; the tools that write files are then not offered either.
	SandboxReadOnly = sandbox.ReadOnly
)

// ErrSandboxUnavailable is wrapped by the error of [New] when a sandbox
// was asked for and cannot run on this machine ([WithSandboxRequired]).
var ErrSandboxUnavailable = sandbox.ErrUnavailable

// ParseSandboxMode reads "workspace-write", "read-only" or "off".
func ParseSandboxMode(s string) (SandboxMode, error) { return sandbox.ParseMode(s) }

// SandboxPolicy is the OS sandbox bash's commands run in.
type SandboxPolicy struct {
	// Mode says what commands may write.
	Mode SandboxMode
	// Network lets the tools reach the network: bash's commands open
	// connections and http_get fetches. False closes it for both: http_get
	// then refuses every call with an error naming this option, unless
	// AllowHosts names the host.
	Network bool
	// AllowHosts, with Network false, opens the closed network to the
	// hosts it names, for bash's commands and http_get alike: an entry is
	// a host name ("registry.npmjs.org": ports 80 and 443), a name and a
	// port ("registry.internal:8443"), or "*.example.com" (every name
	// below example.com). Commands reach them through an HTTP proxy the
	// host runs (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point to it inside
	// the sandbox; direct connections still reach nothing), which refuses,
	// with 403 and a line in the command's output, every other host, every
	// IP address and a listed name that resolves to a non-public address
	// (unless [WithAllowPrivateNetworks] or [WithAllowedHosts] lets http_get
	// reach it: the proxy is guarded as http_get is). The check and the
	// dial use one canonical name (IDNA, lower case, no final dot), which
	// the host resolves itself. At most 64 proxy connections are open at
	// once across the tools. New fails on an entry that is not a host name
	// (an IP address, a URL), and with Network true or the mode off.
	AllowHosts []string
	// Backend picks the engine: "auto" or "" (the strongest available:
	// bubblewrap, then Landlock), "bubblewrap" or "landlock".
	Backend string
	// Readable lists more folders commands may read, beyond the system
	// folders (/usr, /bin, /lib*, /etc, /opt, /sys) and the root: a
	// toolchain, a module cache.
	Readable []string
}

// WithSandbox runs every bash command in an OS sandbox under policy: the
// file system is limited as the mode says, the network closed unless
// allowed, every process of the call in a PID namespace under a minimal
// init, without any capability, only descriptors 0-2 inherited, and (when
// the host runs as root) as the user nobody. TMPDIR points to a temporary
// folder of the call's own, made for it and removed when it ends: nothing
// a command leaves there reaches the next. The spill files are kept next
// to these folders, out of the commands' sight, unless [WithBashSpillDir]
// says otherwise. Policy.Network governs every tool that reaches the
// network: with it false, http_get refuses too. When no
// backend can run, bash runs commands unsandboxed and says so in its
// description and in every "process" Display (Sandbox), and New logs a
// warning; add [WithSandboxRequired] to make New fail instead.
func WithSandbox(policy SandboxPolicy) Option {
	return func(c *config) { c.bash.sandbox = policy }
}

// WithSandboxRequired makes [New] fail with an error wrapping
// [ErrSandboxUnavailable] when the sandbox of [WithSandbox] cannot run
// here (or none was asked for), never a silent unsandboxed run.
func WithSandboxRequired() Option {
	return func(c *config) { c.bash.requireSandbox = true }
}

// WithBashInheritEnv passes variables of the host's environment to bash's
// commands, which by default start from a minimal one (PATH, HOME, LANG,
// TERM, PWD, plus [WithBashEnv]). Each name is passed as is, even a
// secret's. Without names, the whole environment is passed except the
// variables whose name contains KEY, SECRET, TOKEN, PASSWORD or CREDENTIAL
// (any case): those pass only when named.
func WithBashInheritEnv(names ...string) Option {
	return func(c *config) {
		if len(names) == 0 {
			c.bash.inheritAll = true
		}
		c.bash.inheritEnv = append(c.bash.inheritEnv, names...)
	}
}

// secretWords are the parts of a variable's name that mark it as a secret
// never inherited unless named.
var secretWords = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"}

// isSecretName reports whether name looks like a secret's.
func isSecretName(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// bashEnv returns the commands' environment: the minimal variables, the
// inherited ones, PWD, TMPDIR (tmp, the call's own folder in a sandbox),
// then WithBashEnv's (later values win, as the shell reads them).
func (c *CodeTools) bashEnv(tmp string) []string {
	p := c.cfg.bash
	var env []string
	named := map[string]bool{}
	for _, n := range p.inheritEnv {
		named[n] = true
	}
	if p.inheritAll {
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			if !isSecretName(name) || named[name] {
				env = append(env, kv)
			}
		}
	} else {
		base := []string{"PATH", "HOME", "LANG", "TERM"}
		if p.bashCleanEnv {
			base = base[:2]
		}
		for _, k := range append(base, p.inheritEnv...) {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	env = append(env, "PWD="+c.dir)
	if tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	return append(env, p.bashEnv...)
}

// errNoSandboxAsked is WithSandboxRequired's error without WithSandbox.
var errNoSandboxAsked = errors.New("WithSandboxRequired needs WithSandbox with a mode other than SandboxOff")

// ErrHostNotAllowed is wrapped by the error of an http_get call whose host
// [SandboxPolicy].AllowHosts does not name (an IP address included), when
// the sandbox closes the network; bash's commands get a 403 from their
// proxy for such a host.
var ErrHostNotAllowed = web.ErrHostNotAllowed

// setupAllowList reads SandboxPolicy.AllowHosts into the Dialer http_get
// and the sandbox's proxy share; nil without an allow-list.
func (c *CodeTools) setupAllowList() (*web.Dialer, error) {
	p := c.cfg.bash.sandbox
	if len(p.AllowHosts) == 0 {
		return nil, nil
	}
	if p.Mode == SandboxOff || p.Network {
		return nil, fmt.Errorf("codetools: WithSandbox: %w: SandboxPolicy.AllowHosts opens a closed network: it needs a mode other than SandboxOff and Network false", sandbox.ErrBadPolicy)
	}
	hosts, err := web.ParseHostList(p.AllowHosts)
	if err != nil {
		return nil, fmt.Errorf("codetools: WithSandbox: SandboxPolicy.AllowHosts: %w", err)
	}
	cfg := c.cfg.http
	return &web.Dialer{Hosts: hosts, Resolver: cfg.resolver, Blocked: ErrBlockedAddress,
		Private: func(host string) bool { return cfg.allowPrivate || cfg.allowHosts[host] }}, nil
}
