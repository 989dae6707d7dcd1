package skills

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

// Errors callers branch on with errors.Is.
var (
	// ErrUnknownSkill: no skill of that name is loaded.
	ErrUnknownSkill = errors.New("unknown skill")
	// ErrNameTaken: a skill's name is already another skill's (an
	// earlier source wins) or a name the host reserved (a tool's).
	ErrNameTaken = errors.New("skill name taken")
	// ErrOutsideSkill: a resource path leaves the skill's folder (by
	// "..", an absolute path or a symbolic link).
	ErrOutsideSkill = errors.New("outside the skill's folder")
	// ErrTooLarge: a resource is larger than the cap on what is read.
	ErrTooLarge = errors.New("resource too large")
)

// Skill is one loaded, valid skill: its frontmatter's fields, its
// instructions, and where its files are.
type Skill struct {
	// Name is the skill's name, equal to its folder's.
	Name string
	// Description says what the skill does and when to use it.
	Description string
	// License names a license or a bundled license file; "" when not given.
	License string
	// Compatibility names what the skill needs of its environment.
	Compatibility string
	// Metadata holds the frontmatter's metadata, text to text.
	Metadata map[string]string
	// AllowedTools are the tools the skill declares it may use
	// (experimental in the specification): the field's space-separated
	// entries, such as "Bash(git:*)" or "read_file".
	AllowedTools []string
	// Instructions is the Markdown after the frontmatter, trimmed.
	Instructions string
	// Location names the SKILL.md as its source shows it: an absolute path
	// for a folder on disk, "NAME:PATH" for an fs.FS.
	Location string
	// Dir is the skill's folder on disk, absolute with its links resolved,
	// or "" for a skill that is not on disk (an fs.FS): only a skill on
	// disk has scripts a sandboxed bash can run.
	Dir string
	// Source names the source the skill was found in ([Dir] or [FS]).
	Source string

	files       files
	frontmatter map[string]any // the frontmatter as JSON values, verbatim
}

// Frontmatter returns the skill's frontmatter as JSON values, verbatim:
// every field as written, numbers and booleans typed as YAML's core
// schema reads them (metadata's "version: 1.0" is the number 1 here, the
// text "1.0" in [Skill.Metadata]). It is what the MCP skills extension
// lists for the skill. The map is a copy.
func (s Skill) Frontmatter() map[string]any {
	if s.frontmatter == nil {
		return nil
	}
	return deepCopy(s.frontmatter).(map[string]any)
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

// files reads a skill's resources.
type files interface {
	// list returns the skill's files but SKILL.md, as slash paths from its
	// folder, sorted, at most max of them, and whether there were more.
	list(ctx context.Context, max int) ([]string, bool, error)
	// read returns the file at rel, refusing one larger than max bytes.
	read(ctx context.Context, p string, max int64) ([]byte, error)
}

// Resources lists the skill's files other than SKILL.md (scripts,
// references, assets), as paths relative to its folder with forward
// slashes, sorted; at most max of them (0: [DefaultMaxResources]), and
// whether some were left out. Nothing is read.
func (s Skill) Resources(ctx context.Context, max int) ([]string, bool, error) {
	if s.files == nil {
		return nil, false, nil
	}
	if max <= 0 {
		max = DefaultMaxResources
	}
	return s.files.list(ctx, max)
}

// ReadResource reads one of the skill's files, p relative to its folder.
// A path that leaves the folder (by "..", an absolute path or a symbolic
// link) wraps [ErrOutsideSkill]; a file larger than max bytes (0:
// [DefaultMaxResourceBytes]) wraps [ErrTooLarge]; what is not a regular
// file is refused.
func (s Skill) ReadResource(ctx context.Context, p string, max int64) ([]byte, error) {
	if s.files == nil {
		return nil, fmt.Errorf("skill %q has no files", s.Name)
	}
	if max <= 0 {
		max = DefaultMaxResourceBytes
	}
	return s.files.read(ctx, p, max)
}

// Bounds of the resource tools.
const (
	// DefaultMaxResources bounds the files an activation lists.
	DefaultMaxResources = 200
	// DefaultMaxResourceBytes bounds a resource read.
	DefaultMaxResourceBytes = 256 << 10
	// maxResourceScan bounds the entries a listing visits.
	maxResourceScan = 10000
	// maxResourceDepth bounds the folder depth a listing goes down.
	maxResourceDepth = 8
)

// readAll reads r up to max bytes, refusing more: name names it.
func readAll(r io.Reader, size, max int64, name string) ([]byte, error) {
	if size > max {
		return nil, fmt.Errorf("%w: %s has %d bytes, more than the %d read at once", ErrTooLarge, name, size, max)
	}
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: %s has more than the %d bytes read at once", ErrTooLarge, name, max)
	}
	return data, nil
}

// diskFiles are the files of a skill's folder on disk, opened through
// internal/confine: a link out of the folder is refused.
type diskFiles struct{ dir string }

func (d diskFiles) root() (*confine.Root, error) {
	r, err := os.OpenRoot(d.dir)
	if err != nil {
		return nil, fmt.Errorf("open the skill's folder: %w", err)
	}
	return &confine.Root{FS: r, Dir: d.dir, Outside: ErrOutsideSkill}, nil
}

func (d diskFiles) read(ctx context.Context, p string, max int64) ([]byte, error) {
	r, err := d.root()
	if err != nil {
		return nil, err
	}
	defer r.FS.Close()
	rel, err := r.Canonical(ctx, "path", p, false)
	if err != nil {
		return nil, err
	}
	f, info, err := r.Open(p, rel, confine.Either)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a file: %s lists the skill's files", p, ActivateTool)
	}
	return readAll(f, info.Size(), max, p)
}

func (d diskFiles) list(ctx context.Context, max int) ([]string, bool, error) {
	r, err := d.root()
	if err != nil {
		return nil, false, err
	}
	defer r.FS.Close()
	return listFS(ctx, r.FS.FS(), max)
}

// fsFiles are the files of a skill inside an fs.FS (rooted at its folder).
type fsFiles struct {
	fsys fs.FS
	name string // how errors name the skill's folder
}

func (f fsFiles) read(ctx context.Context, p string, max int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rel, err := cleanRel(p)
	if err != nil {
		return nil, err
	}
	file, err := f.fsys.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if info.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a file: %s lists the skill's files", p, ActivateTool)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file; refused", p)
	}
	return readAll(file, info.Size(), max, p)
}

func (f fsFiles) list(ctx context.Context, max int) ([]string, bool, error) {
	return listFS(ctx, f.fsys, max)
}

// cleanRel turns p into a valid fs.FS path inside the skill's folder.
func cleanRel(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 || p == "" {
		return "", fmt.Errorf("path %q: give a path relative to the skill's folder", p)
	}
	q := path.Clean(filepath.ToSlash(p))
	if path.IsAbs(q) || q == ".." || strings.HasPrefix(q, "../") || !fs.ValidPath(q) {
		return "", fmt.Errorf("%w: %s", ErrOutsideSkill, p)
	}
	return q, nil
}

// listFS lists fsys's regular files (and links, which a read checks) but
// SKILL.md and hidden entries, bounded in count, depth and entries visited.
func listFS(ctx context.Context, fsys fs.FS, max int) ([]string, bool, error) {
	var out []string
	more, visited := false, 0
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // an unreadable folder is left out
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if visited++; visited > maxResourceScan {
			more = true
			return fs.SkipAll
		}
		if p == "." {
			return nil
		}
		if strings.HasPrefix(path.Base(p), ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if strings.Count(p, "/") >= maxResourceDepth-1 {
				more = true
				return fs.SkipDir
			}
			return nil
		}
		if p == "SKILL.md" || !(e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0) {
			return nil
		}
		if len(out) == max {
			more = true
			return fs.SkipAll
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	sort.Strings(out)
	return out, more, nil
}

// Set is an immutable set of loaded skills, sorted by name, with the
// problems found while loading them. The zero Set and a nil *Set hold none.
type Set struct {
	skills   []Skill
	byName   map[string]int
	problems []error
}

// NewSet returns a set of skills, sorted by name: of two with one name
// the first is kept and the second is a problem wrapping [ErrNameTaken];
// one whose name breaks the specification's rule is a problem too.
func NewSet(list ...Skill) *Set {
	s := &Set{byName: make(map[string]int, len(list))}
	for _, sk := range list {
		if r := nameRule(sk.Name); r != "" {
			s.problems = append(s.problems, &ValidationError{File: sk.Location, Field: "name", Reason: r})
			continue
		}
		if _, dup := s.byName[sk.Name]; dup {
			s.problems = append(s.problems, fmt.Errorf("%w: %s: skill %q is already given", ErrNameTaken, sk.Location, sk.Name))
			continue
		}
		s.byName[sk.Name] = -1
		s.skills = append(s.skills, sk)
	}
	sort.Slice(s.skills, func(i, j int) bool { return s.skills[i].Name < s.skills[j].Name })
	for i, sk := range s.skills {
		s.byName[sk.Name] = i
	}
	return s
}

// Skills returns the skills, sorted by name. The slice is shared: do not
// modify it.
func (s *Set) Skills() []Skill {
	if s == nil {
		return nil
	}
	return s.skills
}

// Len returns the number of skills.
func (s *Set) Len() int { return len(s.Skills()) }

// Lookup finds a skill by name.
func (s *Set) Lookup(name string) (Skill, bool) {
	if s == nil {
		return Skill{}, false
	}
	i, ok := s.byName[name]
	if !ok {
		return Skill{}, false
	}
	return s.skills[i], true
}

// Problems returns what was refused while loading, one error per skill
// refused (its violations joined: each a [*ValidationError] naming the
// file and the field), or per name taken ([ErrNameTaken]). A refused skill
// is left out of the set; the others are there.
func (s *Set) Problems() []error {
	if s == nil {
		return nil
	}
	return s.problems
}

// Subset returns the set of the named skills that s holds (for a
// sub-agent given only some), without s's problems.
func (s *Set) Subset(names ...string) *Set {
	var list []Skill
	for _, sk := range s.Skills() {
		if slices.Contains(names, sk.Name) {
			list = append(list, sk)
		}
	}
	return NewSet(list...)
}

// Folders returns the folders on disk of the skills (sorted, each once):
// what a sandbox must let bash read to run their scripts
// (codetools.SandboxPolicy's Readable), and nothing else.
func (s *Set) Folders() []string {
	var out []string
	for _, sk := range s.Skills() {
		if sk.Dir != "" {
			out = append(out, sk.Dir)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Current returns s: a Set is its own [Catalog].
func (s *Set) Current(context.Context) *Set { return s }

// Catalog gives the skills in force now: a [*Set] (always the same) or a
// [*Loader] (reloaded when its files change).
type Catalog interface {
	Current(ctx context.Context) *Set
}
