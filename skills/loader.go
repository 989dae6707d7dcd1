package skills

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Source is a place skills are found: a folder on disk ([Dir]) or an
// fs.FS ([FS]) whose entries are skill folders, each holding a SKILL.md,
// or a peer that serves skills ([FromRemote]: an MCP server).
type Source struct {
	name   string
	dir    string
	fsys   fs.FS
	remote Remote
}

// Dir is a folder on disk holding skill folders (a project's
// ".claude/skills" or ".skills", a user's "~/.config/agent/skills"). A
// folder that does not exist holds no skills; one that cannot be read is
// a problem of the set.
func Dir(path string) Source { return Source{name: path, dir: path} }

// FS is an fs.FS holding skill folders at its top (an embed.FS's
// fs.Sub), named name in locations and errors. Its skills are not on
// disk: they have no [Skill.Dir], so no script of theirs runs in bash.
// The fs.FS decides what its links lead to (os.DirFS follows them out of
// its folder): for a folder on disk use [Dir], which refuses links out.
func FS(name string, fsys fs.FS) Source { return Source{name: name, fsys: fsys} }

// DefaultMaxSkills bounds the skills a [Loader] loads from all its sources.
const DefaultMaxSkills = 1000

// DefaultReloadInterval is how long [Loader.Current] trusts its last scan.
const DefaultReloadInterval = 2 * time.Second

// Option configures a [Loader].
type Option func(*loaderConfig)

type loaderConfig struct {
	maxSkills int
	maxBytes  int
	reserved  map[string]bool
	interval  time.Duration
	logger    *slog.Logger
	now       func() time.Time
}

// WithMaxSkills bounds the skills loaded from all sources (default
// [DefaultMaxSkills]); the ones past it are one problem of the set.
func WithMaxSkills(n int) Option { return func(c *loaderConfig) { c.maxSkills = n } }

// WithMaxSkillBytes bounds a SKILL.md (default [DefaultMaxSkillBytes]).
func WithMaxSkillBytes(n int) Option { return func(c *loaderConfig) { c.maxBytes = n } }

// WithReservedNames refuses skills with these names (the host's tool
// names, say), each a problem wrapping [ErrNameTaken].
func WithReservedNames(names ...string) Option {
	return func(c *loaderConfig) {
		for _, n := range names {
			c.reserved[n] = true
		}
	}
}

// WithReloadInterval sets how long [Loader.Current] trusts its last scan
// before it stats the files again (default [DefaultReloadInterval]; 0:
// every call).
func WithReloadInterval(d time.Duration) Option { return func(c *loaderConfig) { c.interval = d } }

// WithLogger logs each new problem at Warn level (default: none logged;
// [Set.Problems] holds them).
func WithLogger(l *slog.Logger) Option { return func(c *loaderConfig) { c.logger = l } }

// Loader finds and validates the skills of its sources, and loads them
// again when their files change. It is safe for concurrent use.
//
// Sources are in precedence order: of two skills with one name, the one of
// the earlier source is kept and the other is a problem wrapping
// [ErrNameTaken] (so list a project's folder before a user's, or the
// reverse, as the host decides).
type Loader struct {
	sources []Source
	cfg     loaderConfig

	mu      sync.Mutex
	cache   map[string]cached // by location
	set     *Set
	scanned time.Time
	logged  map[string]bool
}

// cached is a parsed SKILL.md and the file's state when it was read.
type cached struct {
	size  int64
	mod   time.Time
	sys   fileID
	skill Skill
	err   error

	listing *Listing // a remote skill's listing: the same one keeps its verified files
}

// NewLoader returns a loader of the sources' skills. Nothing is read
// before [Loader.Load] or [Loader.Current].
func NewLoader(sources []Source, opts ...Option) *Loader {
	cfg := loaderConfig{maxSkills: DefaultMaxSkills, maxBytes: DefaultMaxSkillBytes, reserved: map[string]bool{}, interval: DefaultReloadInterval, now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	return &Loader{sources: sources, cfg: cfg, cache: map[string]cached{}, logged: map[string]bool{}}
}

// Current returns the skills in force: the last loaded set, scanned
// again when it is older than the reload interval. A scan that fails
// (a cancelled context) keeps the last set.
func (l *Loader) Current(ctx context.Context) *Set {
	l.mu.Lock()
	fresh := l.set != nil && l.cfg.interval > 0 && l.cfg.now().Sub(l.scanned) < l.cfg.interval
	set := l.set
	l.mu.Unlock()
	if fresh {
		return set
	}
	if s, err := l.Load(ctx); err == nil {
		return s
	}
	return set
}

// Load scans the sources now and returns the set: each SKILL.md whose
// size, time and identity are those of the last scan is not read again.
// It fails only when ctx ends; what is wrong with a skill or a source is
// one of the set's [Set.Problems], and the other skills load.
func (l *Loader) Load(ctx context.Context) (*Set, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var (
		list     []Skill
		problems []error
		where    = map[string]string{}
		next     = make(map[string]cached, len(l.cache))
		over     int
	)
	for _, src := range l.sources {
		found, errs := l.scan(ctx, src, next)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		problems = append(problems, errs...)
		for _, sk := range found {
			switch {
			case l.cfg.reserved[sk.Name]:
				problems = append(problems, fmt.Errorf("%w: %s: %q is the name of one of the host's tools", ErrNameTaken, sk.Location, sk.Name))
			case where[sk.Name] != "":
				problems = append(problems, fmt.Errorf("%w: %s: skill %q is shadowed by %s", ErrNameTaken, sk.Location, sk.Name, where[sk.Name]))
			case len(list) >= l.cfg.maxSkills:
				over++
			default:
				where[sk.Name] = sk.Location
				list = append(list, sk)
			}
		}
	}
	if over > 0 {
		problems = append(problems, fmt.Errorf("%w: %d skills past the limit of %d were not loaded", ErrInvalid, over, l.cfg.maxSkills))
	}
	set := NewSet(list...)
	set.problems = append(problems, set.problems...)
	l.cache, l.set, l.scanned = next, set, l.cfg.now()
	l.log(set.problems)
	return set, nil
}

// log writes each problem not logged before, once.
func (l *Loader) log(problems []error) {
	if l.cfg.logger == nil {
		return
	}
	seen := make(map[string]bool, len(problems))
	for _, p := range problems {
		msg := p.Error()
		seen[msg] = true
		if !l.logged[msg] {
			l.cfg.logger.Warn("skill refused", "error", msg)
		}
	}
	l.logged = seen
}

// scan lists one source's skill folders, in name order, and parses (or
// reuses) each SKILL.md.
func (l *Loader) scan(ctx context.Context, src Source, next map[string]cached) ([]Skill, []error) {
	if src.remote != nil {
		return l.scanRemote(ctx, src, next)
	}
	var fsys fs.FS
	var base string // the absolute folder of a disk source
	if src.fsys != nil {
		fsys = src.fsys
	} else {
		abs, err := filepath.Abs(src.dir)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, []error{fmt.Errorf("skills folder %s: %w", src.dir, err)}
		}
		root, err := os.OpenRoot(abs)
		if err != nil {
			return nil, []error{fmt.Errorf("skills folder %s: %w", src.dir, err)}
		}
		defer root.Close()
		fsys, base = root.FS(), abs
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, []error{fmt.Errorf("skills folder %s: %w", src.name, err)}
	}
	var out []Skill
	var errs []error
	for _, e := range entries {
		if ctx.Err() != nil {
			return nil, nil
		}
		name := e.Name()
		if strings.HasPrefix(name, ".") || !(e.IsDir() || e.Type()&fs.ModeSymlink != 0) {
			continue
		}
		file := path.Join(name, "SKILL.md")
		loc := src.name + ":" + file
		if base != "" {
			loc = filepath.Join(base, name, "SKILL.md")
		}
		info, err := fs.Stat(fsys, file) // through os.Root: a link out is refused
		if errors.Is(err, fs.ErrNotExist) {
			continue // a folder without SKILL.md is not a skill
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %w", ErrInvalid, loc, err))
			continue
		}
		c, ok := l.cache[loc]
		if !ok || c.size != info.Size() || !c.mod.Equal(info.ModTime()) || c.sys != idOf(info) {
			c = l.parseFile(fsys, file, name, loc, info)
			if c.err == nil {
				c.skill.Location, c.skill.Source = loc, src.name
				if base != "" {
					c.skill.Dir = filepath.Join(base, name)
					if d, err := filepath.EvalSymlinks(c.skill.Dir); err == nil {
						c.skill.Dir = d
					}
					c.skill.files = diskFiles{dir: c.skill.Dir}
				} else if sub, err := fs.Sub(fsys, name); err == nil {
					c.skill.files = fsFiles{fsys: sub, name: loc}
				}
			}
		}
		next[loc] = c
		if c.err != nil {
			errs = append(errs, c.err)
			continue
		}
		out = append(out, c.skill)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errs
}

// parseFile reads and parses one SKILL.md, bounded before it is read.
func (l *Loader) parseFile(fsys fs.FS, file, folder, loc string, info fs.FileInfo) cached {
	c := cached{size: info.Size(), mod: info.ModTime(), sys: idOf(info)}
	fail := func(reason string, args ...any) cached {
		c.err = &ValidationError{File: loc, Reason: fmt.Sprintf(reason, args...)}
		return c
	}
	if !info.Mode().IsRegular() {
		return fail("SKILL.md is not a regular file; refused")
	}
	if info.Size() > int64(l.cfg.maxBytes) {
		return fail("the file has %d bytes, more than the %d allowed", info.Size(), l.cfg.maxBytes)
	}
	f, err := fsys.Open(file)
	if err != nil {
		return fail("%v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(l.cfg.maxBytes)+1))
	if err != nil {
		return fail("%v", err)
	}
	c.skill, c.err = parse(data, folder, loc, l.cfg.maxBytes)
	return c
}
