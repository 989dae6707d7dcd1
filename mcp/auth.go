package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmtoolkit/llmtoolkit"
)

// ErrInvalidToken is wrapped by the error of a bearer token that is not
// valid: malformed, badly signed, expired, not yet valid, for another
// issuer or audience. It wraps the SDK's [auth.ErrInvalidToken], so a
// [Verifier] may return either.
var ErrInvalidToken = fmt.Errorf("mcp: %w", auth.ErrInvalidToken)

// ErrNoIdentity is wrapped by the error of an [IdentityFunc] for a token
// that does not name who its calls are attributed to (a tenant and a
// conversation). [Handler] answers such a token 401 invalid_token: no call
// runs without an identity.
var ErrNoIdentity = errors.New("mcp: the token does not name a tenant and a conversation")

// Verifier checks a bearer token and returns what it proves: the scopes
// granted, the expiration, the subject (UserID) and the claims (Extra). A
// token that is not valid is an error wrapping [ErrInvalidToken] (or the
// SDK's [auth.ErrInvalidToken]); any other error is a failure of the
// verifier itself (answered 500 and logged, never 401). [JWTVerifier]
// checks JWTs against a JWKS; a host that introspects opaque tokens (RFC
// 7662) implements Verifier itself. Verify is called from many goroutines
// at once, once per HTTP request.
type Verifier interface {
	Verify(ctx context.Context, token string) (*auth.TokenInfo, error)
}

// VerifierFunc is a [Verifier] written as a function.
type VerifierFunc func(ctx context.Context, token string) (*auth.TokenInfo, error)

// Verify calls f.
func (f VerifierFunc) Verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	return f(ctx, token)
}

// Identity is who a call served by [Handler] under [WithBearerAuth] is
// attributed to. It comes only from the verified token, through the host's
// [IdentityFunc]: nothing a client sends (headers, _meta, arguments)
// changes it.
type Identity struct {
	// Tenant owns the call (trace's tenant_id; a UUID when the calls are
	// recorded with package trace). Required.
	Tenant string
	// Conversation the call belongs to (trace's conversation_id; a UUID
	// when recorded). Required.
	Conversation string
	// Agent, when not empty, is the agent making the calls
	// ([llmtoolkit.Scope].AgentID).
	Agent string
	// Subject is the token's subject (its UserID), for logs and policies.
	Subject string
	// Scopes are the scopes the token grants.
	Scopes []string
}

// HasScope reports whether the token grants scope.
func (id Identity) HasScope(scope string) bool { return slices.Contains(id.Scopes, scope) }

// IdentityFunc maps a verified token to the [Identity] its calls are
// attributed to. It returns an error (wrapping [ErrNoIdentity], say) for a
// token that names no tenant or conversation, or one that this host does
// not serve; the request is then refused 401 invalid_token before any call
// runs. It is called once per HTTP request, from many goroutines at once.
type IdentityFunc func(ctx context.Context, info *auth.TokenInfo) (Identity, error)

// ToolPolicy returns the tools a caller may see and call: r itself, a
// narrowing of it (for example [llmtoolkit.ReadOnly](r) for a token
// without a write scope, or [llmtoolkit.Filter]), or another resolver (a
// tenant's own tools). It is consulted on every tools/list and every
// tools/call, so a narrower scope is enforced on each call, not only on the
// listing. A tool it returns that r does not list is not served: the
// server's tools are those of r. It must be fast and safe for concurrent
// use; a panic refuses the call.
type ToolPolicy func(r llmtoolkit.Resolver, id Identity) llmtoolkit.Resolver

// ProtectedResourceMetadataPath is the well-known path of RFC 9728 under
// which [Handler] serves the protected resource metadata of
// [AuthConfig.Resource] (followed by the resource's path, if any).
const ProtectedResourceMetadataPath = "/.well-known/oauth-protected-resource"

// AuthConfig configures [WithBearerAuth].
type AuthConfig struct {
	// Verifier checks each request's bearer token. Required.
	Verifier Verifier
	// Identity maps a verified token to its caller. Required: a call is
	// never served without a tenant and a conversation.
	Identity IdentityFunc
	// Resource is this server's canonical URI, as clients reach it
	// ("https://mcp.example.com/mcp"): the resource of the protected
	// resource metadata (RFC 9728), and what tokens' audience should name.
	// Required.
	Resource string
	// AuthorizationServers are the issuers clients get tokens from,
	// announced in the metadata. At least one is required.
	AuthorizationServers []string
	// Scopes are the scopes every request's token must grant, answered 403
	// insufficient_scope when missing; they are also announced as
	// scopes_supported with ScopesSupported.
	Scopes []string
	// ScopesSupported are the other scopes the metadata announces (those
	// the Tools policy reads).
	ScopesSupported []string
	// Tools decides, per caller, which tools it sees and may call. Nil
	// means every tool.
	Tools ToolPolicy
	// AllowMissingExpiration accepts tokens without an expiration (some
	// introspected tokens have none). By default such a token is refused.
	AllowMissingExpiration bool
	// ClockSkew is the tolerance on a token's expiration.
	ClockSkew time.Duration
}

// WithBearerAuth makes [Handler] an OAuth 2.1 resource server, as the MCP
// specification's authorization section asks:
//
//   - Every request but the metadata's must carry "Authorization: Bearer
//     TOKEN". Without one it is answered 401 with a challenge
//     `Bearer resource_metadata="URL", scope="..."`; with a token the
//     Verifier refuses, or one whose Identity cannot be found, 401 with
//     `Bearer error="invalid_token", error_description="...",
//     resource_metadata="URL"`; with a token that lacks one of
//     [AuthConfig.Scopes], 403 with `Bearer error="insufficient_scope",
//     scope="...", resource_metadata="URL"`. No MCP message of a refused
//     request is read, so no tool runs.
//   - GET on the metadata URL (RFC 9728, [ProtectedResourceMetadataPath]
//     followed by the resource's path) answers the protected resource
//     metadata, without a token.
//   - The verified token reaches the SDK through its verifier hook
//     ([auth.RequireBearerToken]): its UserID, which binds an MCP session to
//     the identity that opened it, is the subject, tenant and conversation
//     together, so no other caller can use the session.
//   - Each call runs with the caller's [Identity] in its context
//     ([IdentityFrom]), and with the session map ([llmtoolkit.Scope].Session)
//     holding only "tenant_id" and "conversation_id" (the keys package trace
//     and agent read) plus the agent ([llmtoolkit.Scope].AgentID) when the
//     identity names one; nothing of the client's (its _meta included)
//     reaches them.
//   - tools/list lists, and tools/call runs, only the tools
//     [AuthConfig.Tools] gives the caller, checked on every call; a call to
//     another tool is answered with an error result and does not run.
//
// The server refuses every request that arrives without a verified
// identity (a protocol error), so the same server served over stdio with
// [Serve] refuses all calls: authorization is a property of HTTP. A
// configuration that lacks a required field makes every request fail with
// 500 and an error logged, never run unauthenticated.
func WithBearerAuth(a AuthConfig) Option {
	return func(c *config) { c.auth = &a }
}

// IdentityFrom returns the [Identity] a call served under
// [WithBearerAuth] is attributed to, and whether there is one.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

type identityKey struct{}

// identityExtraKey is the key of TokenInfo.Extra under which the bearer
// middleware leaves the caller's Identity for the MCP layer. It is written
// on a copy of the verifier's TokenInfo, after any value of the verifier's
// own under that key is dropped.
const identityExtraKey = "io.llmtoolkit/identity"

// check returns why a is not usable, or nil.
func (a *AuthConfig) check() error {
	var missing []string
	if a.Verifier == nil {
		missing = append(missing, "Verifier")
	}
	if a.Identity == nil {
		missing = append(missing, "Identity")
	}
	if a.Resource == "" {
		missing = append(missing, "Resource")
	}
	if len(a.AuthorizationServers) == 0 {
		missing = append(missing, "AuthorizationServers")
	}
	if len(missing) > 0 {
		return fmt.Errorf("mcp: WithBearerAuth needs %s", strings.Join(missing, ", "))
	}
	if _, err := metadataURL(a.Resource); err != nil {
		return err
	}
	return nil
}

// metadataURL returns the URL of the protected resource metadata of
// resource (RFC 9728 §3.1: the well-known path inserted before the
// resource's path).
func metadataURL(resource string) (*url.URL, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("mcp: AuthConfig.Resource %q must be an absolute URL such as https://mcp.example.com/mcp", resource)
	}
	m := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: ProtectedResourceMetadataPath}
	if p := strings.TrimRight(u.Path, "/"); p != "" {
		m.Path += p
	}
	return m, nil
}

// bearerAuth is the HTTP side of WithBearerAuth: the metadata endpoint,
// the token check with its challenges, the identity.
type bearerAuth struct {
	cfg      AuthConfig
	bad      error // why cfg is unusable, if it is
	metaPath string
	metaURL  string
	meta     http.Handler
	next     http.Handler // the SDK's RequireBearerToken around the MCP handler
	log      *slog.Logger
}

type verifiedKey struct{}

// newBearerAuth wraps next (the MCP handler).
func newBearerAuth(a AuthConfig, next http.Handler, log *slog.Logger) *bearerAuth {
	b := &bearerAuth{cfg: a, log: log, bad: a.check()}
	if b.bad == nil {
		mu, _ := metadataURL(a.Resource)
		b.metaPath, b.metaURL = mu.Path, mu.String()
		supported := slices.Concat(a.Scopes, a.ScopesSupported)
		slices.Sort(supported)
		b.meta = auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:               a.Resource,
			AuthorizationServers:   a.AuthorizationServers,
			ScopesSupported:        slices.Compact(supported),
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "llmtoolkit MCP server",
		})
	}
	// The SDK's own bearer middleware puts the TokenInfo where its
	// streamable transport reads it (the session's user, each request's
	// Extra): it is given the token this middleware has verified.
	pass := func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		if info, ok := ctx.Value(verifiedKey{}).(*auth.TokenInfo); ok {
			return info, nil
		}
		return nil, ErrInvalidToken
	}
	b.next = auth.RequireBearerToken(pass, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return b
}

func (b *bearerAuth) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if b.bad != nil {
		b.log.ErrorContext(req.Context(), "mcp: request refused: the bearer authorization is misconfigured", slog.Any("error", b.bad))
		http.Error(w, "the server's authorization is misconfigured", http.StatusInternalServerError)
		return
	}
	if req.URL.Path == b.metaPath {
		b.meta.ServeHTTP(w, req)
		return
	}
	info, status, challenge, msg := b.authenticate(req)
	if status != 0 {
		refuseRequest(w, req, b.log, status, challenge, msg)
		return
	}
	b.next.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), verifiedKey{}, info)))
}

// authenticate verifies the request's token and finds its identity. On
// refusal it returns the HTTP status, the WWW-Authenticate challenge and
// the body.
func (b *bearerAuth) authenticate(req *http.Request) (info *auth.TokenInfo, status int, challenge, msg string) {
	ctx := req.Context()
	token, ok := bearerToken(req.Header.Values("Authorization"))
	if !ok {
		return nil, http.StatusUnauthorized, b.challenge("", "", b.cfg.Scopes), "this MCP server requires a bearer token"
	}
	invalid := func(desc string) (*auth.TokenInfo, int, string, string) {
		return nil, http.StatusUnauthorized, b.challenge("invalid_token", desc, nil), "invalid token: " + desc
	}
	got, err := b.verify(ctx, token)
	switch {
	case errors.Is(err, auth.ErrInvalidToken):
		return invalid(describe(err))
	case err != nil:
		b.log.ErrorContext(ctx, "mcp: the token verifier failed", slog.Any("error", err))
		return nil, http.StatusInternalServerError, "", "the token could not be verified"
	case got == nil:
		b.log.ErrorContext(ctx, "mcp: the token verifier returned no token information and no error")
		return nil, http.StatusInternalServerError, "", "the token could not be verified"
	}
	now := time.Now()
	switch {
	case got.Expiration.IsZero() && !b.cfg.AllowMissingExpiration:
		return invalid("the token has no expiration")
	case !got.Expiration.IsZero() && got.Expiration.Add(b.cfg.ClockSkew).Before(now):
		return invalid("the token has expired")
	}
	for _, s := range b.cfg.Scopes {
		if !slices.Contains(got.Scopes, s) {
			return nil, http.StatusForbidden, b.challenge("insufficient_scope", "the token lacks scope "+s, b.cfg.Scopes),
				"insufficient scope: this MCP server requires " + strings.Join(b.cfg.Scopes, " ")
		}
	}
	id, err := b.identify(ctx, got)
	if err != nil {
		b.log.WarnContext(ctx, "mcp: request refused: no identity for the token", slog.Any("error", err))
		return invalid(describe(err))
	}
	// A copy: the verifier may cache its TokenInfo.
	info = &auth.TokenInfo{Scopes: slices.Clone(got.Scopes), Expiration: got.Expiration,
		UserID: strings.Join([]string{got.UserID, id.Tenant, id.Conversation, id.Agent}, "\x00"),
		Extra:  maps.Clone(got.Extra)}
	if info.Extra == nil {
		info.Extra = make(map[string]any, 1)
	}
	id.Scopes = info.Scopes
	if id.Subject == "" {
		id.Subject = got.UserID
	}
	info.Extra[identityExtraKey] = id
	return info, 0, "", ""
}

// verify calls the verifier, a panic being a failure of the verifier.
func (b *bearerAuth) verify(ctx context.Context, token string) (info *auth.TokenInfo, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("mcp: the token verifier panicked: %v", p)
		}
	}()
	return b.cfg.Verifier.Verify(ctx, token)
}

// identify calls the IdentityFunc and checks what it returns.
func (b *bearerAuth) identify(ctx context.Context, info *auth.TokenInfo) (id Identity, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: the identity function panicked: %v", ErrNoIdentity, p)
		}
	}()
	id, err = b.cfg.Identity(ctx, info)
	if err != nil {
		return Identity{}, err
	}
	if id.Tenant == "" || id.Conversation == "" {
		return Identity{}, fmt.Errorf("%w (tenant %q, conversation %q)", ErrNoIdentity, id.Tenant, id.Conversation)
	}
	return id, nil
}

// describe returns the text of err fit for an error_description: the
// characters RFC 6750 allows (printable ASCII but '"' and '\'), cut to 200
// bytes. A verifier's message never carries the token.
func describe(err error) string {
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return ' '
		}
		return r
	}, err.Error())
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// challenge returns a WWW-Authenticate value (RFC 6750 §3, RFC 9728 §5.1).
func (b *bearerAuth) challenge(code, desc string, scopes []string) string {
	params := []string{}
	if code != "" {
		params = append(params, fmt.Sprintf("error=%q", code))
	}
	if desc != "" {
		params = append(params, fmt.Sprintf("error_description=%q", desc))
	}
	if len(scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(scopes, " ")))
	}
	params = append(params, fmt.Sprintf("resource_metadata=%q", b.metaURL))
	return "Bearer " + strings.Join(params, ", ")
}

// bearerToken returns the token of the one Authorization header, which
// must use the Bearer scheme.
func bearerToken(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(values[0]), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// callerResolverKey carries the resolver a caller's tools/call runs
// through (its ToolPolicy's answer) to the tool handler.
type callerResolverKey struct{}

// callerResolver returns the resolver the caller of ctx may use, or r.
func callerResolver(ctx context.Context, r llmtoolkit.Resolver) llmtoolkit.Resolver {
	if cr, ok := ctx.Value(callerResolverKey{}).(llmtoolkit.Resolver); ok {
		return cr
	}
	return r
}

// authorizeRequests adds to srv the MCP side of WithBearerAuth: every
// request needs the identity the bearer middleware found; tools/list and
// tools/call see only the caller's tools; each call runs with the caller's
// identity in its context.
func authorizeRequests(srv *sdk.Server, r llmtoolkit.Resolver, a *AuthConfig, log *slog.Logger) {
	if a == nil {
		return
	}
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			id, ok := requestIdentity(req)
			if !ok {
				log.WarnContext(ctx, "mcp: request refused: it carries no verified identity", slog.String("method", method))
				return nil, errors.New("unauthorized: this server serves only requests with a verified bearer token")
			}
			ctx = withIdentity(ctx, id)
			switch method {
			case "tools/list":
				res, err := next(ctx, method, req)
				if lr, ok := res.(*sdk.ListToolsResult); ok && err == nil {
					allowed, perr := allowedTools(r, a.Tools, id)
					if perr != nil {
						log.ErrorContext(ctx, "mcp: the tool policy failed", slog.Any("error", perr))
						return nil, errors.New("internal error: the server's tool policy failed")
					}
					lr.Tools = slices.DeleteFunc(slices.Clone(lr.Tools), func(t *sdk.Tool) bool { return t == nil || !allowed[t.Name] })
				}
				return res, err
			case "tools/call":
				cr, name, err := callerTools(r, a.Tools, id, req)
				if err != nil {
					log.ErrorContext(ctx, "mcp: the tool policy failed", slog.Any("error", err))
					return textResult("internal error of the MCP server: its tool policy failed", true), nil
				}
				if cr == nil {
					log.WarnContext(ctx, "mcp: tool call refused: the tool is not available to the caller",
						slog.String("tool", name), slog.String("tenant", id.Tenant), slog.String("subject", id.Subject))
					msg := fmt.Sprintf("tool %q is not available to this caller: its token's scopes (%s) do not grant it",
						name, strings.Join(id.Scopes, " "))
					tellRefused(ctx, r, req, log, msg, ErrToolNotAllowed)
					return textResult(msg, true), nil
				}
				ctx = context.WithValue(ctx, callerResolverKey{}, cr)
			}
			return next(ctx, method, req)
		}
	})
}

// requestIdentity returns the identity the bearer middleware left in the
// request's token information.
func requestIdentity(req sdk.Request) (Identity, bool) {
	if req == nil {
		return Identity{}, false
	}
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return Identity{}, false
	}
	id, ok := extra.TokenInfo.Extra[identityExtraKey].(Identity)
	return id, ok && id.Tenant != "" && id.Conversation != ""
}

// withIdentity returns ctx attributed to id: the identity, the session map
// (only the tenant and the conversation) and the agent.
func withIdentity(ctx context.Context, id Identity) context.Context {
	ctx = context.WithValue(ctx, identityKey{}, id)
	ctx = llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) {
		sc.Session = map[string]any{"tenant_id": id.Tenant, "conversation_id": id.Conversation}
	})
	if id.Agent != "" {
		ctx = llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.AgentID = id.Agent })
	}
	return ctx
}

// policyResolver returns the caller's resolver, a panic of the policy
// being an error.
func policyResolver(r llmtoolkit.Resolver, policy ToolPolicy, id Identity) (cr llmtoolkit.Resolver, err error) {
	if policy == nil {
		return r, nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("mcp: the tool policy panicked: %v", p)
		}
	}()
	return policy(r, id), nil
}

// allowedTools returns the names of the tools the caller may see.
func allowedTools(r llmtoolkit.Resolver, policy ToolPolicy, id Identity) (map[string]bool, error) {
	if r == nil {
		return nil, nil
	}
	cr, err := policyResolver(r, policy, id)
	if err != nil || cr == nil {
		return nil, err
	}
	allowed := make(map[string]bool)
	for _, t := range cr.Tools() {
		allowed[t.Name] = true
	}
	return allowed, nil
}

// callerTools returns the resolver the call of req runs through, or nil
// when the caller may not call its tool, and the tool's name.
func callerTools(r llmtoolkit.Resolver, policy ToolPolicy, id Identity, req sdk.Request) (llmtoolkit.Resolver, string, error) {
	name := ""
	if cr, ok := req.(*sdk.CallToolRequest); ok && cr.Params != nil {
		name = cr.Params.Name
	}
	if r == nil {
		return nil, name, nil
	}
	cr, err := policyResolver(r, policy, id)
	if err != nil || cr == nil {
		return nil, name, err
	}
	// Tools, not LookupTool: a narrowing wrapper's listing is what it
	// allows.
	for _, t := range cr.Tools() {
		if t.Name == name {
			return cr, name, nil
		}
	}
	return nil, name, nil
}
