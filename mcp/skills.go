package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/skills"
)

// SkillsExtension is the identifier of MCP's skills extension (SEP-2640),
// under which a server declares it in capabilities.extensions.
const SkillsExtension = "io.modelcontextprotocol/skills"

// The methods of the skills extension.
const (
	methodSkillsList    = "skills/list"
	methodSkillsGet     = "skills/get"
	methodDirectoryRead = "resources/directory/read"
)

// skillsPageSize is how many skills one page of skills/list holds: a page
// reads the files of its skills to digest them.
const skillsPageSize = 50

// skillScheme is the scheme of a served skill's resources.
const skillScheme = "skill://"

// WithSkills makes a server ([NewServer], [Serve], [Handler]) serve the
// catalog's skills (a [*skills.Loader], read again on each request, or a
// [*skills.Set]) as MCP's skills extension ([SkillsExtension], SEP-2640)
// defines them. The server declares the extension, with directoryRead,
// and the resources capability, and answers:
//
//   - skills/list (paginated, 50 skills a page) and skills/get {uri}: each
//     skill's entry, its SKILL.md's URI skill://NAME/SKILL.md, its
//     frontmatter verbatim ([skills.Skill.Frontmatter]) and every file
//     with its sha256 digest and size ([skills.Skill.Manifest]: at most
//     512 files and 16 MiB a skill; a skill past them is left out, with a
//     warning); a URI that names no skill is -32602;
//   - resources/read of skill://NAME/PATH: the file, as text when it is
//     UTF-8 (SKILL.md as text/markdown), else as a blob; resources/list
//     adds each skill's SKILL.md, named and described as the skill;
//   - resources/directory/read of skill://NAME or skill://NAME/FOLDER:
//     its direct children, a folder as inode/directory; a URI that is not
//     a folder of a skill is -32602.
//
// The files are read as the skills package reads them: confined to the
// skill's folder. skills/list, skills/get and resources/directory/read
// are answered over HTTP ([Handler]) and over stdio ([Serve] with
// [StdioTransport]); resources/read and resources/list on every
// transport, [NewServer]'s too.
func WithSkills(c skills.Catalog) Option { return func(cfg *config) { cfg.skills = c } }

// skillServer answers the skills extension's requests.
type skillServer struct {
	catalog skills.Catalog
	log     *slog.Logger
	limit   *limiter // WithRateLimits' Tenant limit, for the skills requests; nil: none
}

// codeRateLimited is the JSON-RPC error of a skills request refused by
// [WithRateLimits] (in the server-error range); its data holds
// [RateLimitMetaKey].
const codeRateLimited = -32029

// newSkillServer returns the server of cfg's skills. Under [WithRateLimits]
// the skills requests (skills/list, whose every page digests the files of
// up to 50 skills, skills/get, resources/directory/read) are bounded per
// tenant by its Tenant limit, in buckets of their own.
func newSkillServer(cfg config) *skillServer {
	ss := &skillServer{catalog: cfg.skills, log: cfg.warnLogger()}
	if l := cfg.rateLimits; l != nil && l.Tenant.enabled() {
		ss.limit = newLimiter(RateLimits{Tenant: l.Tenant, MaxKeys: l.MaxKeys}, ss.log)
	}
	return ss
}

// refuseOverLimit returns the error of a skills request over its tenant's
// rate limit, or nil when it may run.
func (s *skillServer) refuseOverLimit(ctx context.Context, method string) *jsonrpc.Error {
	switch method {
	case methodSkillsList, methodSkillsGet, methodDirectoryRead:
	default:
		return nil
	}
	if s.limit == nil {
		return nil
	}
	tenant := ""
	if id, ok := IdentityFrom(ctx); ok {
		tenant = id.Tenant
	}
	wait, which := s.limit.allow(tenant, method, time.Now())
	if wait <= 0 {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	s.log.WarnContext(ctx, "mcp: skills request refused: over its rate limit",
		slog.String("tenant", tenant), slog.String("method", method), slog.String("limit", which), slog.Int("retry_after_s", secs))
	data, _ := json.Marshal(map[string]int{RateLimitMetaKey: secs})
	return &jsonrpc.Error{Code: codeRateLimited, Message: fmt.Sprintf("rate limit: too many requests (%s); retry %s in %d s", which, method, secs), Data: data}
}

// skillEntry is an entry of skills/list and the skill of skills/get.
type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []skillResource `json:"resources"`
}

type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// cacheable are the list-caching attributes of the current protocol's
// results: a loader's skills change, so nothing is kept.
type cacheable struct {
	ResultType string `json:"resultType"`
	TTLMs      int    `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}

func skillURI(name, p string) string { return skillScheme + name + "/" + p }

// splitSkillURI returns the skill's name and the path after it of a
// skill:// URI ("" for the skill's folder itself).
func splitSkillURI(uri string) (name, rest string, ok bool) {
	s, ok := strings.CutPrefix(uri, skillScheme)
	if !ok {
		return "", "", false
	}
	name, rest, _ = strings.Cut(s, "/")
	return name, strings.TrimSuffix(rest, "/"), skills.ValidName(name)
}

func (s *skillServer) entry(ctx context.Context, sk skills.Skill) (*skillEntry, error) {
	files, err := sk.Manifest(ctx)
	if err != nil {
		return nil, err
	}
	e := &skillEntry{URI: skillURI(sk.Name, "SKILL.md"), Frontmatter: sk.Frontmatter(), Resources: make([]skillResource, 0, len(files))}
	for _, f := range files {
		e.Resources = append(e.Resources, skillResource{URI: skillURI(sk.Name, f.Path), Digest: f.Digest, Size: f.Size})
	}
	return e, nil
}

// answer answers one request of the extension's own methods: ok is false
// for any other method.
func (s *skillServer) answer(ctx context.Context, method string, params json.RawMessage) (result any, rpcErr *jsonrpc.Error, ok bool) {
	switch method {
	case methodSkillsList, methodSkillsGet, methodDirectoryRead:
	default:
		return nil, nil, false
	}
	var p struct {
		URI    string `json:"uri"`
		Cursor string `json:"cursor"`
	}
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ": params must be an object: " + err.Error()}, true
		}
	}
	switch method {
	case methodSkillsList:
		result, rpcErr = s.list(ctx, p.Cursor)
	case methodSkillsGet:
		result, rpcErr = s.get(ctx, p.URI)
	default:
		result, rpcErr = s.directory(ctx, p.URI, p.Cursor)
	}
	return result, rpcErr, true
}

func (s *skillServer) list(ctx context.Context, cursor string) (any, *jsonrpc.Error) {
	if cursor != "" && !skills.ValidName(cursor) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "skills/list: the cursor is not one this server gave"}
	}
	all := s.catalog.Current(ctx).Skills()
	i := sort.Search(len(all), func(i int) bool { return all[i].Name > cursor })
	out := struct {
		cacheable
		Skills     []*skillEntry `json:"skills"`
		NextCursor string        `json:"nextCursor,omitempty"`
	}{cacheable: cacheable{"complete", 0, "private"}, Skills: []*skillEntry{}}
	for n := 0; i < len(all) && n < skillsPageSize; i, n = i+1, n+1 {
		e, err := s.entry(ctx, all[i])
		if err != nil {
			if ctx.Err() != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: ctx.Err().Error()}
			}
			s.log.WarnContext(ctx, "mcp: skill not listed", slog.String("skill", all[i].Name), slog.Any("error", err))
			continue
		}
		out.Skills = append(out.Skills, e)
	}
	if i < len(all) {
		out.NextCursor = all[i-1].Name
	}
	return out, nil
}

func (s *skillServer) get(ctx context.Context, uri string) (any, *jsonrpc.Error) {
	name, rest, ok := splitSkillURI(uri)
	sk, found := s.catalog.Current(ctx).Lookup(name)
	if !ok || rest != "SKILL.md" || !found {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("skills/get: %.200q names no skill this server serves", uri)}
	}
	e, err := s.entry(ctx, sk)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("skills/get: skill %q: %v", name, err)}
	}
	return struct {
		cacheable
		Skill *skillEntry `json:"skill"`
	}{cacheable{"complete", 0, "private"}, e}, nil
}

// directory answers resources/directory/read: the direct children of a
// skill's folder or of one of its subfolders.
func (s *skillServer) directory(ctx context.Context, uri, cursor string) (any, *jsonrpc.Error) {
	notDir := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("resources/directory/read: %.200q is not a folder of a skill this server serves", uri)}
	name, rest, ok := splitSkillURI(uri)
	sk, found := s.catalog.Current(ctx).Lookup(name)
	if !ok || !found {
		return nil, notDir
	}
	if cursor != "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resources/directory/read: the cursor is not one this server gave"}
	}
	files, _, err := sk.Resources(ctx, skills.MaxManifestFiles)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("resources/directory/read: skill %q: %v", name, err)}
	}
	files = append(files, "SKILL.md")
	prefix := ""
	if rest != "" {
		prefix = rest + "/"
	}
	var children []*sdk.Resource
	dirs := map[string]bool{}
	isDir := rest == ""
	for _, f := range files {
		sub, ok := strings.CutPrefix(f, prefix)
		if !ok {
			continue
		}
		isDir = true
		if d, _, nested := strings.Cut(sub, "/"); nested {
			if !dirs[d] {
				dirs[d] = true
				children = append(children, &sdk.Resource{URI: skillURI(name, prefix+d), Name: d, MIMEType: "inode/directory"})
			}
			continue
		}
		children = append(children, &sdk.Resource{URI: skillURI(name, f), Name: sub, MIMEType: mimeOf(f, nil)})
	}
	if !isDir {
		return nil, notDir
	}
	sort.Slice(children, func(i, j int) bool { return children[i].URI < children[j].URI })
	return struct {
		ResultType string          `json:"resultType"`
		Resources  []*sdk.Resource `json:"resources"`
	}{"complete", children}, nil
}

// mimeOf names a skill file's media type: SKILL.md's is text/markdown.
func mimeOf(p string, data []byte) string {
	switch ext := path.Ext(p); {
	case path.Base(p) == "SKILL.md" || ext == ".md":
		return "text/markdown"
	case mime.TypeByExtension(ext) != "":
		t, _, _ := strings.Cut(mime.TypeByExtension(ext), ";")
		return t
	case data != nil && !isText(data):
		return "application/octet-stream"
	}
	return "text/plain"
}

func isText(data []byte) bool { return bytes.IndexByte(data, 0) < 0 && utf8.Valid(data) }

// template is the resource template of every skill file, through which
// the SDK routes resources/read of a skill:// URI to read.
func (s *skillServer) template() (*sdk.ResourceTemplate, sdk.ResourceHandler) {
	return &sdk.ResourceTemplate{URITemplate: skillScheme + "{name}/{+path}", Name: "skill-file",
			Description: "A file of a skill this server serves (SKILL.md, references, scripts, assets)."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return s.read(ctx, req.Params.URI)
		}
}

// middleware adds the skills' SKILL.md to the first page of
// resources/list.
func (s *skillServer) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "resources/list":
			res, err := next(ctx, method, req)
			lr, ok := res.(*sdk.ListResourcesResult)
			lreq, _ := req.(*sdk.ListResourcesRequest)
			if err != nil || !ok || (lreq != nil && lreq.Params != nil && lreq.Params.Cursor != "") {
				return res, err
			}
			for _, sk := range s.catalog.Current(ctx).Skills() {
				lr.Resources = append(lr.Resources, &sdk.Resource{URI: skillURI(sk.Name, "SKILL.md"), Name: sk.Name,
					Description: sk.Description, MIMEType: "text/markdown"})
			}
			return lr, nil
		}
		return next(ctx, method, req)
	}
}

func (s *skillServer) read(ctx context.Context, uri string) (*sdk.ReadResourceResult, error) {
	name, rest, ok := splitSkillURI(uri)
	sk, found := s.catalog.Current(ctx).Lookup(name)
	if !ok || !found || rest == "" {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	data, err := sk.ReadResource(ctx, rest, skills.MaxManifestBytes)
	if err != nil {
		s.log.WarnContext(ctx, "mcp: skill file not read", slog.String("uri", uri), slog.Any("error", err))
		return nil, sdk.ResourceNotFoundError(uri)
	}
	c := &sdk.ResourceContents{URI: uri, MIMEType: mimeOf(rest, data)}
	if isText(data) {
		c.Text = string(data)
	} else {
		c.Blob = data
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
}

// skillRoutes answers skills/list, skills/get and
// resources/directory/read, sent alone in a POST, and hands every other
// request to next: the SDK answers methods it does not know before any
// middleware could. It sits behind the authorization (protect).
type skillRoutes struct {
	next http.Handler
	ss   *skillServer
}

func (sr *skillRoutes) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.Body == nil {
		sr.next.ServeHTTP(w, req)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, sdk.DefaultMaxRequestBodyBytes+1))
	req.Body = readCloser{io.MultiReader(bytes.NewReader(body), req.Body), req.Body}
	if err != nil || !(bytes.Contains(body, []byte(`"skills/`)) || bytes.Contains(body, []byte(`"resources/directory/`))) {
		sr.next.ServeHTTP(w, req)
		return
	}
	var msg taskRequest
	if json.Unmarshal(body, &msg) != nil {
		sr.next.ServeHTTP(w, req)
		return
	}
	result, rpcErr, ok := sr.ss.safeAnswer(req.Context(), msg.Method, msg.Params)
	if !ok {
		sr.next.ServeHTTP(w, req)
		return
	}
	if msg.JSONRPC != "2.0" || len(msg.ID) == 0 || string(msg.ID) == "null" {
		writeRPC(w, http.StatusBadRequest, msg.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "a " + msg.Method + " request needs an id"})
		return
	}
	writeRPC(w, http.StatusOK, msg.ID, result, rpcErr)
}

// safeAnswer is answer with a panic (a hostile catalog, a bug) turned into
// an internal error.
func (s *skillServer) safeAnswer(ctx context.Context, method string, params json.RawMessage) (result any, rpcErr *jsonrpc.Error, ok bool) {
	if e := s.refuseOverLimit(ctx, method); e != nil {
		return nil, e, true
	}
	panicked := false
	func() {
		defer guard.Recover("mcp skills "+method, nil, func(error) { panicked = true })
		result, rpcErr, ok = s.answer(ctx, method, params)
	}()
	if panicked {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: method + ": internal error of the server"}, true
	}
	return result, rpcErr, ok
}
