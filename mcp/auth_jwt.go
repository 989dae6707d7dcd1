package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// DefaultJWTAlgorithms are the signing algorithms a [JWTVerifier] accepts
// unless [JWTConfig.Algorithms] says otherwise: asymmetric ones only, the
// keys coming from a public JWKS.
var DefaultJWTAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWTConfig configures [NewJWTVerifier]. Issuer, Audience and one of
// JWKSURL or JWKS are required.
type JWTConfig struct {
	// Issuer must equal the token's iss claim.
	Issuer string
	// Audience must be one of the token's aud values: this server's
	// resource URI (AuthConfig.Resource), so that a token minted for
	// another server is refused (RFC 8707).
	Audience string
	// JWKSURL is where the issuer publishes its keys. They are fetched
	// once when the verifier is made, kept in memory, refreshed every
	// RefreshInterval in the background, and fetched again at most once
	// every five minutes when a token names a key ID the cache lacks (a
	// rotation); a token whose key is still unknown is refused at once.
	JWKSURL string
	// JWKS is a JSON Web Key Set given inline (used with JWKSURL or
	// without: tests, air-gapped hosts).
	JWKS json.RawMessage
	// Algorithms are the accepted signing algorithms (default
	// [DefaultJWTAlgorithms]). "none" and the HMAC ones (HS256...) are
	// refused: a JWKS holds public keys.
	Algorithms []string
	// Leeway is the tolerance on exp, nbf and iat (default 0).
	Leeway time.Duration
	// RefreshInterval is how often the JWKS is fetched again (default one
	// hour).
	RefreshInterval time.Duration
	// HTTPClient fetches the JWKS (default a client with a 10 s timeout).
	HTTPClient *http.Client
	// Logger receives the failures of background refreshes (default
	// [slog.Default]).
	Logger *slog.Logger
}

// JWTVerifier is a [Verifier] of JWT access tokens (RFC 9068) signed by a
// key of a JWKS, on github.com/golang-jwt/jwt/v5 and
// github.com/MicahParks/keyfunc/v3. It checks the signature with the
// key the token's kid names (an alg the key does not declare is refused),
// the algorithm against an allow-list (never "none"), iss, aud, exp
// (required), nbf and iat. The [auth.TokenInfo] it returns holds the
// scopes (the "scope" claim, space-separated, or "scp", a list), the
// expiration, the subject as UserID and every claim in Extra. Every
// refusal wraps [ErrInvalidToken]; no message carries the token.
type JWTVerifier struct {
	keys   keyfunc.Keyfunc
	parser *jwt.Parser
}

// NewJWTVerifier returns a verifier for cfg. With a JWKSURL it fetches the
// keys (a failure is logged, not returned: the keys are fetched again when
// a token needs them) and refreshes them in a goroutine until ctx is done.
func NewJWTVerifier(ctx context.Context, cfg JWTConfig) (*JWTVerifier, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("mcp: a JWT verifier needs an Issuer and an Audience")
	}
	if cfg.JWKSURL == "" && len(cfg.JWKS) == 0 {
		return nil, errors.New("mcp: a JWT verifier needs a JWKSURL or a JWKS")
	}
	algs := cfg.Algorithms
	if len(algs) == 0 {
		algs = DefaultJWTAlgorithms
	}
	for _, a := range algs {
		if strings.EqualFold(a, "none") || strings.HasPrefix(strings.ToUpper(a), "HS") {
			return nil, fmt.Errorf("mcp: JWT algorithm %q refused: only asymmetric algorithms verify against a JWKS", a)
		}
		if jwt.GetSigningMethod(a) == nil {
			return nil, fmt.Errorf("mcp: unknown JWT algorithm %q", a)
		}
	}
	keys, err := newKeyfunc(ctx, cfg)
	if err != nil {
		return nil, err
	}
	parser := jwt.NewParser(jwt.WithValidMethods(slices.Clone(algs)), jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(cfg.Leeway))
	return &JWTVerifier{keys: keys, parser: parser}, nil
}

// newKeyfunc builds the cached key set.
func newKeyfunc(ctx context.Context, cfg JWTConfig) (keyfunc.Keyfunc, error) {
	var given keyfunc.Keyfunc
	if len(cfg.JWKS) > 0 {
		k, err := keyfunc.NewJWKSetJSON(cfg.JWKS)
		if err != nil {
			return nil, fmt.Errorf("mcp: reading the JWKS: %w", err)
		}
		given = k
	}
	if cfg.JWKSURL == "" {
		return given, nil
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	override := keyfunc.Override{
		Client:           client,
		HTTPTimeout:      10 * time.Second,
		RefreshInterval:  cfg.RefreshInterval,
		RateLimitWaitMax: time.Millisecond, // an unknown kid past the refresh budget fails at once
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(ctx context.Context, err error) {
				log.WarnContext(ctx, "mcp: fetching the JWKS failed", slog.String("url", u), slog.Any("error", err))
			}
		},
	}
	if given != nil {
		override.Given = given.Storage()
	}
	k, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{cfg.JWKSURL}, override)
	if err != nil {
		return nil, fmt.Errorf("mcp: the JWKS at %s: %w", cfg.JWKSURL, err)
	}
	return k, nil
}

// Verify checks token; see [JWTVerifier].
func (v *JWTVerifier) Verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(token, claims, v.keys.KeyfuncCtx(ctx)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return nil, fmt.Errorf("%w: no valid exp claim", ErrInvalidToken)
	}
	sub, _ := claims.GetSubject()
	return &auth.TokenInfo{Scopes: tokenScopes(claims), Expiration: exp.Time, UserID: sub, Extra: claims}, nil
}

// tokenScopes reads the scope claim (RFC 9068: a space-separated string)
// or the scp claim (a list, or a string).
func tokenScopes(claims jwt.MapClaims) []string {
	for _, name := range []string{"scope", "scp"} {
		switch v := claims[name].(type) {
		case string:
			return strings.Fields(v)
		case []any:
			var out []string
			for _, s := range v {
				if s, ok := s.(string); ok {
					out = append(out, s)
				}
			}
			return out
		}
	}
	return nil
}

// ClaimsIdentity returns an [IdentityFunc] that reads the tenant and the
// conversation from the string claims tenantClaim and conversationClaim of
// a token (its TokenInfo.Extra, where [JWTVerifier] puts every claim), and
// the agent from agentClaim when it is not "". Each must be a UUID, as
// package trace requires, written in its canonical form: a token without
// them, or with another value (a table name, a path, a list), is refused
// with an error wrapping [ErrNoIdentity].
func ClaimsIdentity(tenantClaim, conversationClaim, agentClaim string) IdentityFunc {
	return func(_ context.Context, info *auth.TokenInfo) (Identity, error) {
		read := func(claim string) (string, error) {
			s, ok := info.Extra[claim].(string)
			if !ok || s == "" {
				return "", fmt.Errorf("%w: no string claim %q", ErrNoIdentity, claim)
			}
			if !textutil.CanonicalUUID(s) {
				return "", fmt.Errorf("%w: claim %q is not a UUID", ErrNoIdentity, claim)
			}
			return s, nil
		}
		var id Identity
		var err error
		if id.Tenant, err = read(tenantClaim); err != nil {
			return Identity{}, err
		}
		if id.Conversation, err = read(conversationClaim); err != nil {
			return Identity{}, err
		}
		if agentClaim != "" {
			if a, ok := info.Extra[agentClaim].(string); ok {
				id.Agent = a
			}
		}
		id.Subject = info.UserID
		return id, nil
	}
}
