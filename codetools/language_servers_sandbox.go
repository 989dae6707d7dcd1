package codetools

// The language servers' sandbox (WithLanguageServers): each server runs
// under the sandbox's backend with its read policy, the paths the host's
// deny rules exclude hidden from it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/lsp"
	"github.com/llmtoolkit/llmtoolkit/internal/readcheck"
	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// maxHiddenPaths bounds the files and folders hidden from a server (one
// mount each); past it the server is not started.
const maxHiddenPaths = 4096

// maxServerChecks bounds the permission layers' read checks kept for the
// servers (one per layer: a run's guard, its sub-agents'); past it no
// server is started.
const maxServerChecks = 64

// maxHiddenScan bounds the paths of the tree the read checks are asked
// about at a server's start; past it the server is not started.
const maxHiddenScan = 200_000

// errServersUnconfined is why a server is not started when the host
// excludes paths and no sandbox can hide them.
var errServersUnconfined = errors.New("no sandbox backend runs here to hide the paths the host excludes from the language server (install bubblewrap, or use a kernel with Landlock)")

// errNoServerSandbox is why a server is not started when no sandbox runs
// here and the host has not opted in (WithUnconfinedLanguageServers).
var errNoServerSandbox = errors.New("no sandbox backend runs here and the host did not allow unconfined language servers (WithUnconfinedLanguageServers)")

// serverSandbox is how the servers run: the backend (bash's, or the
// strongest available), the folder of their private homes and caches, and
// every glob a call has excluded, which the servers' views hide.
type serverSandbox struct {
	backend sandbox.Backend // nil: none runs here (why says so)
	why     string
	logger  *slog.Logger
	refused sync.Once // the one line saying servers are not started unconfined
	tmp     string    // per-server folders (home, caches, TMPDIR); removed at Close

	goOnce sync.Once
	goEnv  map[string]string // GOROOT, GOPATH, GOMODCACHE of the host's go; nil without go
	goDir  string            // the folder of the host's go binary

	mu     sync.Mutex
	globs  []string                          // the union of the excluded paths calls have carried
	checks []serverCheck                     // the read checks calls have carried, one per permission layer
	covers map[string]map[string]os.FileInfo // by server: each path its view covers, as it was then
}

// serverCheck is a permission layer's read check (internal/readcheck)
// with the context of the last call that carried it, its cancellation
// removed: the servers' views are made after that call.
type serverCheck struct {
	key   any
	ctx   context.Context
	check readcheck.Func
}

// setupServerSandbox picks the servers' backend: bash's when it has one,
// else the strongest this machine runs. Without one, servers run directly
// (and none starts while the host excludes paths).
func (c *CodeTools) setupServerSandbox(logger *slog.Logger) {
	s := &c.srvSbx
	s.logger = logger
	s.backend = c.sbx.backend
	if s.backend == nil {
		b, err := sandbox.ByName("auto")
		if err != nil {
			s.why = err.Error()
			if c.cfg.lsp.unconfined {
				logger.Info("codetools: language servers run without a sandbox (WithUnconfinedLanguageServers)", slog.String("reason", s.why))
			}
			return
		}
		s.backend = b
	}
	tmp, err := os.MkdirTemp("", "llmtoolkit-lsp-*")
	if err != nil {
		s.backend, s.why = nil, fmt.Sprintf("the servers' folder: %v", err)
		if c.cfg.lsp.unconfined {
			logger.Warn("codetools: language servers run without a sandbox (WithUnconfinedLanguageServers)", slog.String("reason", s.why))
		}
		return
	}
	s.tmp = tmp
}

// closeServerSandbox removes the servers' folders (after they ended).
func (c *CodeTools) closeServerSandbox() error {
	if c.srvSbx.tmp == "" {
		return nil
	}
	return os.RemoveAll(c.srvSbx.tmp)
}

// serversScope notes the paths ctx's call excludes or hides
// (llmtoolkit.Scope.ExcludedPaths and HiddenPaths): when one is new, the
// running servers are restarted, so that every server's view hides it.
func (c *CodeTools) serversScope(ctx context.Context) {
	sc := llmtoolkit.ScopeFrom(ctx)
	globs := append(slices.Clip(sc.ExcludedPaths), sc.HiddenPaths...)
	checks := readcheck.From(ctx)
	if len(globs) == 0 && len(checks) == 0 {
		return
	}
	c.checkServerViews()
	c.serversSeeTree(ctx)
	s := &c.srvSbx
	s.mu.Lock()
	var newGlobs []string
	var newChecks []serverCheck
	for _, g := range globs {
		if !slices.Contains(s.globs, g) {
			s.globs = append(s.globs, g)
			newGlobs = append(newGlobs, g)
		}
	}
	for _, ch := range checks {
		kept := serverCheck{key: ch.Key, ctx: context.WithoutCancel(ctx), check: ch.Check}
		i := slices.IndexFunc(s.checks, func(k serverCheck) bool { return k.key == ch.Key })
		if i >= 0 {
			s.checks[i] = kept // the same layer: its latest call's context
			continue
		}
		s.checks = append(s.checks, kept)
		newChecks = append(newChecks, kept)
	}
	s.mu.Unlock()
	if (len(newGlobs) > 0 || len(newChecks) > 0) && c.hidesMore(newGlobs, newChecks) {
		c.lsp.Restart()
	}
}

// checkServerViews restarts the servers when a path their views cover is
// no longer the file or folder it was (replaced under its name, as an
// editor's save or mv does, or removed): the kernel drops a cover whose
// file is unlinked, so the view would show the new one.
func (c *CodeTools) checkServerViews() {
	s := &c.srvSbx
	s.mu.Lock()
	stale := false
	for _, view := range s.covers {
		for p, was := range view {
			if now, err := os.Stat(p); err != nil || !os.SameFile(was, now) {
				stale = true
				break
			}
		}
	}
	if stale {
		s.covers = nil // the next launches record theirs
	}
	s.mu.Unlock()
	if stale {
		c.lsp.Restart()
	}
}

// serversSeeNew restarts the servers when a path a command or a tool made
// is hidden (serverHides) and not covered in every server's view, itself
// or by a folder holding it: a view made before it existed does not hide
// it.
func (c *CodeTools) serversSeeNew(added []string) {
	hides := c.serverHides()
	if hides == nil {
		return
	}
	for _, rel := range added {
		if !hides(rel) {
			continue
		}
		if !c.coveredInEveryView(rel) {
			c.lsp.Restart()
			return
		}
	}
}

// coveredInEveryView reports whether rel (root-relative, slash-separated)
// is hidden in the view of every server launched since the views were
// last made afresh: it, or a folder holding it, is covered there
// (checkServerViews checks each cover is still the file it was).
func (c *CodeTools) coveredInEveryView(rel string) bool {
	s := &c.srvSbx
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, view := range s.covers {
		covered := false
		for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
			if _, ok := view[filepath.Join(c.dir, filepath.FromSlash(p))]; ok {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

// hidesMore reports whether the new globs or checks refuse a path that
// some running server's view does not cover (or cannot tell): only then
// are the servers restarted for them, since a cold start costs seconds
// (gopls on this repository: about 30).
func (c *CodeTools) hidesMore(globs []string, checks []serverCheck) bool {
	paths, err := c.hiddenPaths(func(rel string) bool {
		if matchAny(globs, rel) {
			return true
		}
		for _, ch := range checks {
			if callCheck(ch, rel) != nil {
				return true
			}
		}
		return false
	})
	if err != nil {
		return true
	}
	for _, p := range paths {
		if rel, ok := c.relOf(p); !ok || !c.coveredInEveryView(filepath.ToSlash(rel)) {
			return true
		}
	}
	return false
}

// serverHides returns the one decision of what the servers must not
// read, nil when nothing is hidden: a root-relative, slash-separated path
// is hidden when a glob the calls carried (llmtoolkit.Scope.ExcludedPaths,
// HiddenPaths) matches it or a permission layer's read check refuses it
// (internal/readcheck: as read_file's call on it would be refused). A
// folder it hides is hidden with all it holds.
func (c *CodeTools) serverHides() func(rel string) bool {
	s := &c.srvSbx
	s.mu.Lock()
	globs, checks := slices.Clone(s.globs), slices.Clone(s.checks)
	s.mu.Unlock()
	if len(globs) == 0 && len(checks) == 0 {
		return nil
	}
	return func(rel string) bool {
		if matchAny(globs, rel) {
			return true
		}
		for _, ch := range checks {
			if err := callCheck(ch, rel); err != nil {
				return true
			}
		}
		return false
	}
}

// callCheck asks one read check about rel; a panic refuses.
func callCheck(ch serverCheck, rel string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the read check panicked: %v", r)
		}
	}()
	return ch.check(ch.ctx, rel)
}

func matchAny(globs []string, rel string) bool {
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, rel); ok {
			return true
		}
	}
	return false
}

// launchServer runs a server in the sandbox: read-only, no network, the
// root readable but what the excluded globs match (and, while there are
// any, every file with more than one name, as the tools refuse them), the
// server's program and its install folder, the host's Go toolchain and
// module cache and the sandbox's Readable; a private home, cache and
// TMPDIR writable.
func (c *CodeTools) launchServer(l lsp.Launch) (*exec.Cmd, func(), error) {
	s := &c.srvSbx
	s.mu.Lock()
	tooMany := len(s.checks) > maxServerChecks
	s.mu.Unlock()
	if tooMany {
		return nil, nil, fmt.Errorf("more than %d permission layers' read checks reached the language servers", maxServerChecks)
	}
	hides := c.serverHides()
	if s.backend == nil {
		if !c.cfg.lsp.unconfined {
			s.refused.Do(func() {
				s.logger.Warn("codetools: language servers are not started: no sandbox runs here; their files get no diagnostics (WithUnconfinedLanguageServers runs them unconfined)",
					slog.String("reason", s.why))
			})
			return nil, nil, errNoServerSandbox
		}
		if hidden, err := c.hiddenPaths(hides); err != nil || len(hidden) > 0 {
			return nil, nil, errServersUnconfined
		}
		s.mu.Lock()
		if s.covers == nil {
			s.covers = map[string]map[string]os.FileInfo{}
		}
		s.covers[l.Name+"\x00"+l.Dir] = map[string]os.FileInfo{} // a view that hides nothing
		s.mu.Unlock()
		return nil, nil, nil // directly, as the host's user (the host opted in)
	}
	if hides != nil {
		// What appears after this listing is new to the watch, which
		// checks it at every call that reaches the servers.
		bctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c.srvWatch.baseline(bctx, c.dir)
		cancel()
	}
	hidden, err := c.hiddenPaths(hides)
	if err != nil {
		return nil, nil, err
	}
	view := map[string]os.FileInfo{}
	for _, h := range hidden {
		if fi, err := os.Stat(h); err == nil {
			view[h] = fi
		}
	}
	s.mu.Lock()
	if s.covers == nil {
		s.covers = map[string]map[string]os.FileInfo{}
	}
	s.covers[l.Name+"\x00"+l.Dir] = view
	s.mu.Unlock()
	home := filepath.Join(s.tmp, strings.Map(func(r rune) rune {
		if r == '/' || r == 0 {
			return '_'
		}
		return r
	}, l.Name))
	for _, d := range []string{"home", "cache", "tmp"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			return nil, nil, fmt.Errorf("the server's folder: %w", err)
		}
	}
	readable := slices.Clone(c.cfg.bash.sandbox.Readable)
	readable = append(readable, programFolders(l.Binary)...)
	env := append(slices.Clone(l.Env),
		"HOME="+filepath.Join(home, "home"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "home", ".config"), "TMPDIR="+filepath.Join(home, "tmp"),
		"GOCACHE="+filepath.Join(home, "cache", "go-build"), "GOPROXY=off", "GOTOOLCHAIN=local", "GOTELEMETRY=off")
	if ge, dir := c.hostGo(); ge != nil {
		readable = append(readable, dir, ge["GOROOT"], ge["GOMODCACHE"])
		env = append(env, "GOROOT="+ge["GOROOT"], "GOPATH="+ge["GOPATH"], "GOMODCACHE="+ge["GOMODCACHE"])
	}
	for _, srv := range c.cfg.lsp.servers {
		if srv.Name == l.Name {
			readable = append(readable, srv.Readable...)
		}
	}
	readable = slices.DeleteFunc(readable, func(r string) bool { return r == "" })
	cmd, err := s.backend.Command(sandbox.Spec{Path: l.Argv[0], Args: l.Argv[1:], Dir: l.Dir, Env: env},
		sandbox.Policy{Mode: sandbox.ReadOnly, Root: c.dir, Tmp: home, Readable: readable, Hidden: hidden})
	if err != nil {
		return nil, nil, fmt.Errorf("the sandbox: %w", err)
	}
	return cmd.Cmd, func() { _ = cmd.Kill() }, nil
}

// hiddenPaths walks the root for what hides refuses (a refused folder is
// hidden whole) and, while something may be hidden, the files with more
// than one name (another of which may be refused). A nil hides hides
// nothing.
func (c *CodeTools) hiddenPaths(hides func(rel string) bool) ([]string, error) {
	if hides == nil {
		return nil, nil
	}
	var out []string
	seen := 0
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == c.dir {
				return err
			}
			return nil // unreadable here: unreadable in the sandbox too
		}
		rel, rerr := filepath.Rel(c.dir, p)
		if rerr != nil || rel == "." {
			return nil
		}
		if seen++; seen > maxHiddenScan {
			return fmt.Errorf("the root holds more than %d paths to check for the language server's view", maxHiddenScan)
		}
		hide := hides(filepath.ToSlash(rel))
		if !hide && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				if n, ok := confine.LinkCount(info); ok && n > 1 {
					hide = true
				}
			}
		}
		if !hide {
			return nil
		}
		if len(out) == maxHiddenPaths {
			return fmt.Errorf("the host's rules refuse more than %d files and folders to hide from the language server; deny folders rather than files", maxHiddenPaths)
		}
		out = append(out, p)
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	return out, err
}

// programFolders lists what a server's program needs to read: its folder,
// and where it leads through links; for a program in node_modules (an npm
// install), the folder holding node_modules.
func programFolders(bin string) []string {
	out := []string{filepath.Dir(bin)}
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return out
	}
	out = append(out, filepath.Dir(real))
	for _, p := range []string{bin, real} {
		if i := strings.LastIndex(p, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i > 0 {
			out = append(out, p[:i])
		}
	}
	return out
}

// hostGo reads the host's go environment once: GOROOT, GOPATH and
// GOMODCACHE (gopls runs go list over them), and go's folder.
func (c *CodeTools) hostGo() (map[string]string, string) {
	s := &c.srvSbx
	s.goOnce.Do(func() {
		bin, err := exec.LookPath("go")
		if err != nil {
			return
		}
		out, err := exec.Command(bin, "env", "-json", "GOROOT", "GOPATH", "GOMODCACHE").Output()
		if err != nil {
			return
		}
		var env map[string]string
		if json.Unmarshal(out, &env) == nil {
			s.goEnv, s.goDir = env, filepath.Dir(bin)
		}
	})
	return s.goEnv, s.goDir
}
