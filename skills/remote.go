package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// ErrIntegrity is wrapped by the error of a skill's file, fetched from a
// peer ([FromRemote]), whose bytes are not those the peer listed: a size
// or a digest that differs, or a SKILL.md whose frontmatter is not the
// listed one. The content is not used; once its SKILL.md fails, the skill
// is refused until the source lists it again.
var ErrIntegrity = errors.New("skill file fails verification against its listing")

// Remote is a peer that serves skills without their files being on this
// machine: an MCP server of the skills extension (package mcp's
// Client.Skills). The listing carries each file's size and digest; the
// files are fetched only when a skill is activated (its SKILL.md) and when
// one is read.
type Remote interface {
	// ListSkills returns the skills the peer serves, with no file read.
	ListSkills(ctx context.Context) ([]Listing, error)
	// ReadSkillFile returns the bytes of the file at uri; more than max
	// bytes is an error.
	ReadSkillFile(ctx context.Context, uri string, max int64) ([]byte, error)
}

// Listing is one skill as a peer lists it (the MCP skills extension's
// entry of skills/list).
type Listing struct {
	// URI is the URI of the skill's SKILL.md; the skill's name is the path
	// segment before "/SKILL.md", its folder everything before it.
	URI string
	// Frontmatter is the SKILL.md's frontmatter, as JSON values, verbatim.
	Frontmatter map[string]any
	// Files are every file of the skill, the SKILL.md included.
	Files []ListedFile
}

// ListedFile is one file of a [Listing]: its URI, digest ("sha256:" and 64
// lowercase hexadecimal digits) and size in bytes.
type ListedFile struct {
	URI    string
	Digest string
	Size   int64
}

// FromRemote is a source of the skills a peer serves, named name in
// locations and errors. Each listed skill is checked as a SKILL.md on disk
// is, on its listed frontmatter (every rule of the specification, the
// bounds), and on its listing: a SKILL.md URI, every file inside the
// skill's folder and listed once, digests of the sha256 form, at most
// [MaxManifestFiles] files and [MaxManifestBytes] bytes. Nothing is
// fetched before activation: activate_skill fetches the SKILL.md,
// refusing it (wrapping [ErrIntegrity]) when its size, its digest or its
// frontmatter is not the listed one; read_skill_resource fetches one
// listed file of an activated skill, verified the same way. A remote
// skill has no folder on disk ([Skill.Dir] is ""), so no script of it
// runs.
func FromRemote(name string, r Remote) Source { return Source{name: name, remote: r} }

// digestForm is a listed digest's form.
var digestForm = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// scanRemote lists a remote source's skills and checks each listing.
// A skill listed as it was at the last scan is the same skill: its files,
// once verified, stay verified.
func (l *Loader) scanRemote(ctx context.Context, src Source, next map[string]cached) ([]Skill, []error) {
	list, err := src.remote.ListSkills(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, []error{fmt.Errorf("skills source %s: %w", src.name, err)}
	}
	var out []Skill
	var errs []error
	for _, ls := range list {
		loc := src.name + ":" + ls.URI
		if c, ok := l.cache[loc]; ok && c.listing != nil && reflect.DeepEqual(*c.listing, ls) {
			next[loc] = c
			if c.err != nil {
				errs = append(errs, c.err)
				continue
			}
			out = append(out, c.skill)
			continue
		}
		sk, err := fromListing(src, ls, l.cfg.maxBytes)
		next[loc] = cached{skill: sk, err: err, listing: &ls}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, sk)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errs
}

// fromListing checks one listed skill and returns it, its files not read.
func fromListing(src Source, ls Listing, maxBytes int) (Skill, error) {
	loc := src.name + ":" + ls.URI
	fail := func(format string, args ...any) (Skill, error) {
		return Skill{}, &ValidationError{File: loc, Reason: fmt.Sprintf(format, args...)}
	}
	dir, ok := strings.CutSuffix(ls.URI, "/SKILL.md")
	if !ok || !strings.Contains(dir, "://") || strings.HasSuffix(dir, "/") {
		return fail("the listed URI must name the skill's SKILL.md (\"…/NAME/SKILL.md\")")
	}
	folder := path.Base(dir[strings.Index(dir, "://")+3:])
	if len(ls.Files) > MaxManifestFiles {
		return fail("the listing has %d files, more than the %d allowed", len(ls.Files), MaxManifestFiles)
	}
	var total int64
	seen := make(map[string]bool, len(ls.Files))
	var own *ListedFile
	for i := range ls.Files {
		f := &ls.Files[i]
		switch {
		case seen[f.URI]:
			return fail("the file %s is listed twice", f.URI)
		case f.URI != ls.URI && !strings.HasPrefix(f.URI, dir+"/"):
			return fail("the file %s is outside the skill's folder %s", f.URI, dir)
		case f.URI != ls.URI:
			if _, err := cleanRel(strings.TrimPrefix(f.URI, dir+"/")); err != nil {
				return fail("the file %s: %v", f.URI, err)
			}
		}
		if !digestForm.MatchString(f.Digest) {
			return fail("the file %s has the digest %.80q, not sha256: and 64 lowercase hexadecimal digits", f.URI, f.Digest)
		}
		if f.Size < 0 || f.Size > MaxManifestBytes {
			return fail("the file %s has the size %d: a size is 0 to %d bytes", f.URI, f.Size, MaxManifestBytes)
		}
		seen[f.URI] = true
		total += f.Size
		if f.URI == ls.URI {
			own = f
		}
	}
	if own == nil {
		return fail("the listing has no entry of the SKILL.md itself (its digest and size)")
	}
	if total > MaxManifestBytes {
		return fail("the skill's files have %d bytes, more than the %d allowed", total, MaxManifestBytes)
	}
	if own.Size > int64(maxBytes) {
		return fail("the SKILL.md has %d bytes, more than the %d allowed", own.Size, maxBytes)
	}
	// The listed frontmatter is checked by the rules a SKILL.md's is: it is
	// written as YAML and parsed as one.
	enc, err := json.Marshal(ls.Frontmatter)
	if err != nil || ls.Frontmatter == nil {
		return fail("the listed frontmatter is not a JSON object")
	}
	if len(enc) > MaxFrontmatterBytes {
		return fail("the listed frontmatter has %d bytes, more than the %d allowed", len(enc), MaxFrontmatterBytes)
	}
	y, err := yaml.Marshal(ls.Frontmatter)
	if err != nil {
		return fail("the listed frontmatter cannot be read as YAML: %v", err)
	}
	sk, err := parse(append(append([]byte("---\n"), y...), "---\n"...), folder, loc, maxBytes)
	if err != nil {
		return Skill{}, err
	}
	sk.Location, sk.Source = loc, src.name
	sk.files = &remoteFiles{remote: src.remote, listing: ls, dir: dir, loc: loc, maxBytes: maxBytes, listed: normalJSON(ls.Frontmatter)}
	return sk, nil
}

// normalJSON is v as encoding/json reads it back: numbers as float64.
func normalJSON(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(data, &out) != nil {
		return nil
	}
	return out
}

// remoteFiles are the files of a skill a peer serves, fetched on demand
// and verified against the listing.
type remoteFiles struct {
	remote   Remote
	listing  Listing
	dir      string // the skill's folder URI, without a trailing slash
	loc      string
	maxBytes int
	listed   any // the listed frontmatter, normalized

	mu       sync.Mutex
	verified *Skill // the SKILL.md fetched and verified
	refused  error  // the SKILL.md failed verification
}

// lazy is implemented by the files of a skill whose instructions are
// fetched at activation.
type lazy interface {
	load(ctx context.Context, sk Skill) (Skill, error)
	loaded() bool
}

func (r *remoteFiles) loaded() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.verified != nil
}

// load fetches the SKILL.md, verifies its size, digest and frontmatter
// against the listing, and returns the skill with its instructions.
func (r *remoteFiles) load(ctx context.Context, sk Skill) (Skill, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refused != nil {
		return Skill{}, r.refused
	}
	if r.verified != nil {
		return *r.verified, nil
	}
	f := r.file(r.listing.URI)
	data, err := r.fetch(ctx, f)
	if err != nil {
		if errors.Is(err, ErrIntegrity) {
			r.refused = err
		}
		return Skill{}, err
	}
	got, err := parse(data, path.Base(r.dir[strings.Index(r.dir, "://")+3:]), r.loc, r.maxBytes)
	if err != nil {
		r.refused = fmt.Errorf("%w: %s: %w", ErrIntegrity, r.listing.URI, err)
		return Skill{}, r.refused
	}
	if diff := frontmatterDiff(r.listed, normalJSON(got.frontmatter)); diff != "" {
		r.refused = fmt.Errorf("%w: %s: the fetched SKILL.md's frontmatter is not the listed one (%s): the skill is not loaded", ErrIntegrity, r.listing.URI, diff)
		return Skill{}, r.refused
	}
	got.Location, got.Source, got.files = sk.Location, sk.Source, r
	r.verified = &got
	return got, nil
}

// frontmatterDiff names the fields whose values differ, or "".
func frontmatterDiff(listed, fetched any) string {
	a, _ := listed.(map[string]any)
	b, _ := fetched.(map[string]any)
	var fields []string
	for k, v := range a {
		if w, ok := b[k]; !ok || !reflect.DeepEqual(v, w) {
			fields = append(fields, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			fields = append(fields, k)
		}
	}
	if len(fields) == 0 && (a == nil) != (b == nil) {
		return "one of them is not a mapping"
	}
	sort.Strings(fields)
	if len(fields) == 0 {
		return ""
	}
	return "fields differ: " + strings.Join(fields, ", ")
}

func (r *remoteFiles) file(uri string) *ListedFile {
	for i := range r.listing.Files {
		if r.listing.Files[i].URI == uri {
			return &r.listing.Files[i]
		}
	}
	return nil
}

// fetch reads one listed file and verifies its size and digest.
func (r *remoteFiles) fetch(ctx context.Context, f *ListedFile) ([]byte, error) {
	data, err := r.remote.ReadSkillFile(ctx, f.URI, f.Size)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", f.URI, err)
	}
	if int64(len(data)) != f.Size {
		return nil, fmt.Errorf("%w: %s has %d bytes, the listing says %d: not used", ErrIntegrity, f.URI, len(data), f.Size)
	}
	if d := Digest(data); d != f.Digest {
		return nil, fmt.Errorf("%w: %s has the digest %s, the listing says %s: not used", ErrIntegrity, f.URI, d, f.Digest)
	}
	return data, nil
}

func (r *remoteFiles) read(ctx context.Context, p string, max int64) ([]byte, error) {
	r.mu.Lock()
	refused, ok := r.refused, r.verified != nil
	r.mu.Unlock()
	if refused != nil {
		return nil, refused
	}
	if !ok {
		return nil, fmt.Errorf("%s: activate the skill first (%s): its files are fetched once its SKILL.md is verified", p, ActivateTool)
	}
	rel, err := cleanRel(p)
	if err != nil {
		return nil, err
	}
	f := r.file(r.dir + "/" + rel)
	if f == nil {
		return nil, fmt.Errorf("%s is not among the skill's listed files: %s lists them", p, ActivateTool)
	}
	if f.Size > max {
		return nil, fmt.Errorf("%w: %s has %d bytes, more than the %d read at once", ErrTooLarge, p, f.Size, max)
	}
	return r.fetch(ctx, f)
}

func (r *remoteFiles) list(ctx context.Context, max int) ([]string, bool, error) {
	var out []string
	for _, f := range r.listing.Files {
		if f.URI == r.listing.URI {
			continue
		}
		out = append(out, strings.TrimPrefix(f.URI, r.dir+"/"))
	}
	sort.Strings(out)
	if len(out) > max {
		return out[:max], true, nil
	}
	return out, false, nil
}

func (r *remoteFiles) manifest() []File {
	out := make([]File, 0, len(r.listing.Files))
	for _, f := range r.listing.Files {
		p := "SKILL.md"
		if f.URI != r.listing.URI {
			p = strings.TrimPrefix(f.URI, r.dir+"/")
		}
		out = append(out, File{Path: p, Size: f.Size, Digest: f.Digest})
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Path == "SKILL.md" || (out[j].Path != "SKILL.md" && out[i].Path < out[j].Path)
	})
	return out
}
