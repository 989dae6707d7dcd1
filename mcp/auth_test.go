package mcp

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

const (
	testIssuer   = "https://issuer.example.test"
	testResource = "https://mcp.example.test/mcp"
	scopeTools   = "mcp:tools"
	scopeWrite   = "mcp:write"
)

// issuer is a test authorization server's signing side: its keys, the
// JWKS it publishes over HTTP (counting the fetches), and a key it does
// not publish.
type issuer struct {
	rsaKey, stranger *rsa.PrivateKey
	ecKey            *ecdsa.PrivateKey
	jwks             *httptest.Server
	fetches          atomic.Int64
}

func newIssuer(t testing.TB) *issuer {
	t.Helper()
	is := &issuer{}
	var err error
	is.rsaKey, err = rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	is.stranger, err = rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	is.ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	set := map[string]any{"keys": []any{
		map[string]any{"kty": "RSA", "kid": "rsa-1", "alg": "RS256", "use": "sig",
			"n": b64(is.rsaKey.N.Bytes()), "e": b64(big.NewInt(int64(is.rsaKey.E)).Bytes())},
		map[string]any{"kty": "EC", "kid": "ec-1", "alg": "ES256", "use": "sig", "crv": "P-256",
			"x": b64(is.ecKey.X.FillBytes(make([]byte, 32))), "y": b64(is.ecKey.Y.FillBytes(make([]byte, 32)))},
	}}
	body, err := json.Marshal(set)
	require.NoError(t, err)
	is.jwks = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		is.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(is.jwks.Close)
	return is
}

// claims returns valid claims for tenant, changed by edit.
func (is *issuer) claims(tenant, conversation string, scopes ...string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{"iss": testIssuer, "aud": testResource, "sub": "user-" + tenant[:8],
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"scope": strings.Join(scopes, " "), "tenant_id": tenant, "conversation_id": conversation}
}

// sign signs claims with RS256 and the published key.
func (is *issuer) sign(t testing.TB, c jwt.MapClaims) string {
	t.Helper()
	return signWith(t, jwt.SigningMethodRS256, "rsa-1", is.rsaKey, c)
}

func signWith(t testing.TB, m jwt.SigningMethod, kid string, key any, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

func (is *issuer) verifier(t testing.TB) *JWTVerifier {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	v, err := NewJWTVerifier(ctx, JWTConfig{Issuer: testIssuer, Audience: testResource, JWKSURL: is.jwks.URL})
	require.NoError(t, err)
	return v
}

// tenantTable is the trace table of a tenant: one per tenant, picked from
// the call's session map (what WithBearerAuth sets from the token).
func tenantTable(suffix string) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		tenant, _ := llmtoolkit.ScopeFrom(ctx).Session["tenant_id"].(string)
		if tenant == "" {
			return "", fmt.Errorf("no tenant")
		}
		return "t_" + strings.ReplaceAll(tenant, "-", "")[:12] + suffix, nil
	}
}

// authServer is a Handler under WithBearerAuth over a recorded Fake:
// peek is read-only, poke is not; the policy gives poke only to tokens
// with scope mcp:write. Every call is traced in its tenant's table.
type authServer struct {
	url    string
	fake   *llmtoolkittest.Fake
	db     *gorm.DB
	suffix string
	is     *issuer
}

func newAuthServer(t testing.TB, db *gorm.DB, opts ...Option) *authServer {
	t.Helper()
	s := &authServer{db: db, suffix: "_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:8], is: newIssuer(t)}
	obj := map[string]any{"type": "object"}
	peek := llmtoolkit.MustTool("peek", "Reads.", obj)
	peek.Annotations = &llmtoolkit.Annotations{ReadOnly: true}
	poke := llmtoolkit.MustTool("poke", "Writes.", obj)
	s.fake = llmtoolkittest.NewFake(nil).
		Add(peek, func(context.Context, llmtoolkit.Call) (string, error) { return "peeked", nil }).
		Add(poke, func(context.Context, llmtoolkit.Call) (string, error) { return "poked", nil })
	rec := trace.Record(s.fake, db, trace.WithTableFrom(tenantTable(s.suffix)))
	t.Cleanup(func() { _ = rec.Close() })
	opts = append([]Option{WithBearerAuth(AuthConfig{
		Verifier:             s.is.verifier(t),
		Identity:             ClaimsIdentity("tenant_id", "conversation_id", ""),
		Resource:             testResource,
		AuthorizationServers: []string{testIssuer},
		Scopes:               []string{scopeTools},
		ScopesSupported:      []string{scopeWrite},
		Tools: func(r llmtoolkit.Resolver, id Identity) llmtoolkit.Resolver {
			if id.HasScope(scopeWrite) {
				return r
			}
			return llmtoolkit.ReadOnly(r)
		},
	})}, opts...)
	srv := httptest.NewServer(Handler(rec, opts...))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// migrate creates the trace table of tenant.
func (s *authServer) migrate(t testing.TB, tenant string) string {
	t.Helper()
	ctx := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"tenant_id": tenant} })
	name, err := tenantTable(s.suffix)(ctx)
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(s.db, trace.WithTable(name)))
	t.Cleanup(func() { _ = s.db.Exec(`DROP TABLE IF EXISTS "` + name + `"`).Error })
	return name
}

// rows returns the tool names recorded in tenant's table.
func (s *authServer) rows(t testing.TB, tenant string) []string {
	t.Helper()
	ctx := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"tenant_id": tenant} })
	got, err := trace.List(ctx, s.db, trace.Filter{}, trace.WithTableFrom(tenantTable(s.suffix)))
	require.NoError(t, err)
	var names []string
	for _, tr := range got {
		require.Equal(t, tenant, tr.TenantID)
		names = append(names, tr.ToolName)
	}
	return names
}

// post sends one JSON-RPC message with token (none when "") and session.
func (s *authServer) post(t testing.TB, token, session string, msg map[string]any) *http.Response {
	t.Helper()
	body, err := json.Marshal(msg)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// open starts a session with token and returns its id.
func (s *authServer) open(t testing.TB, token string) string {
	t.Helper()
	resp := s.post(t, token, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "t", "version": "1"}}})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, _ = io.Copy(io.Discard, resp.Body)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	resp = s.post(t, token, sid, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	return sid
}

// callTool sends tools/call and returns the response's body.
func (s *authServer) callTool(t testing.TB, token, session, name string, meta map[string]any) (*http.Response, string) {
	t.Helper()
	params := map[string]any{"name": name, "arguments": map[string]any{}}
	if meta != nil {
		params["_meta"] = meta
	}
	resp := s.post(t, token, session, map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, string(body)
}

// authDBs are the databases the token tests run on: SQLite in a temporary
// file, and PostgreSQL (a fresh schema) when LLMTOOLKIT_TEST_POSTGRES_DSN
// is set.
func authDBs(t *testing.T) map[string]func(t *testing.T) *gorm.DB {
	dbs := map[string]func(t *testing.T) *gorm.DB{
		"sqlite": func(t *testing.T) *gorm.DB {
			db, err := trace.OpenSQLite(t.TempDir() + "/traces.db")
			require.NoError(t, err)
			t.Cleanup(func() {
				if s, err := db.DB(); err == nil {
					_ = s.Close()
				}
			})
			return db
		},
	}
	if dsn := os.Getenv("LLMTOOLKIT_TEST_POSTGRES_DSN"); dsn != "" {
		dbs["postgres"] = func(t *testing.T) *gorm.DB {
			admin, err := trace.OpenPostgres(dsn)
			require.NoError(t, err)
			schema := "mcp_auth_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
			require.NoError(t, admin.Exec("CREATE SCHEMA "+schema).Error)
			db, err := trace.OpenPostgres(dsn + " search_path=" + schema)
			require.NoError(t, err)
			t.Cleanup(func() {
				if s, err := db.DB(); err == nil {
					_ = s.Close()
				}
				_ = admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
				if s, err := admin.DB(); err == nil {
					_ = s.Close()
				}
			})
			return db
		}
	}
	return dbs
}

// TestBearerTokenTable: each bad token is refused with its status and
// challenge, on a live session, and no tool runs nor any row is written;
// a valid token's calls land in its tenant's table only, whatever the
// client puts in _meta.
func TestBearerTokenTable(t *testing.T) {
	for dbName, open := range authDBs(t) {
		t.Run(dbName, func(t *testing.T) {
			s := newAuthServer(t, open(t))
			tenantA, tenantB := uuid.NewString(), uuid.NewString()
			convA, convB := uuid.NewString(), uuid.NewString()
			s.migrate(t, tenantA)
			s.migrate(t, tenantB)
			is := s.is
			good := is.sign(t, is.claims(tenantA, convA, scopeTools, scopeWrite))
			sid := s.open(t, good)
			tableB, err := tenantTable(s.suffix)(llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"tenant_id": tenantB} }))
			require.NoError(t, err)

			edit := func(f func(c jwt.MapClaims)) string {
				c := is.claims(tenantA, convA, scopeTools, scopeWrite)
				f(c)
				return is.sign(t, c)
			}
			meta := `resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"`
			for _, tc := range []struct {
				name      string
				token     string
				status    int
				challenge []string // substrings of WWW-Authenticate
			}{
				{"missing", "", 401, []string{`Bearer `, `scope="mcp:tools"`, meta}},
				{"malformed", "not-a-jwt", 401, []string{`error="invalid_token"`, meta}},
				{"expired", edit(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Minute).Unix() }), 401, []string{`error="invalid_token"`, "expired", meta}},
				{"no expiration", edit(func(c jwt.MapClaims) { delete(c, "exp") }), 401, []string{`error="invalid_token"`, meta}},
				{"not yet valid", edit(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() }), 401, []string{`error="invalid_token"`, "not valid yet", meta}},
				{"wrong audience", edit(func(c jwt.MapClaims) { c["aud"] = "https://other.example.test/mcp" }), 401, []string{`error="invalid_token"`, "aud", meta}},
				{"wrong issuer", edit(func(c jwt.MapClaims) { c["iss"] = "https://evil.example.test" }), 401, []string{`error="invalid_token"`, "iss", meta}},
				{"bad signature", signWith(t, jwt.SigningMethodRS256, "rsa-1", is.stranger, is.claims(tenantA, convA, scopeTools, scopeWrite)), 401, []string{`error="invalid_token"`, "signature", meta}},
				{"alg none", signWith(t, jwt.SigningMethodNone, "rsa-1", jwt.UnsafeAllowNoneSignatureType, is.claims(tenantA, convA, scopeTools, scopeWrite)), 401, []string{`error="invalid_token"`, meta}},
				{"alg HS256 with the public key", signWith(t, jwt.SigningMethodHS256, "rsa-1", is.rsaKey.PublicKey.N.Bytes(), is.claims(tenantA, convA, scopeTools, scopeWrite)), 401, []string{`error="invalid_token"`, meta}},
				{"key not in the JWKS", signWith(t, jwt.SigningMethodRS256, "rsa-2", is.stranger, is.claims(tenantA, convA, scopeTools, scopeWrite)), 401, []string{`error="invalid_token"`, meta}},
				{"scope too narrow", is.sign(t, is.claims(tenantA, convA, "mcp:other")), 403, []string{`error="insufficient_scope"`, `scope="mcp:tools"`, meta}},
				{"tenant claim missing", edit(func(c jwt.MapClaims) { delete(c, "tenant_id") }), 401, []string{`error="invalid_token"`, "tenant_id", meta}},
				{"conversation claim missing", edit(func(c jwt.MapClaims) { delete(c, "conversation_id") }), 401, []string{`error="invalid_token"`, meta}},
				{"tenant claim naming another tenant's table", edit(func(c jwt.MapClaims) { c["tenant_id"] = tableB }), 401, []string{`error="invalid_token"`, "not a UUID", meta}},
				{"tenant claim not a string", edit(func(c jwt.MapClaims) { c["tenant_id"] = []any{tenantB} }), 401, []string{`error="invalid_token"`, meta}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					resp, body := s.callTool(t, tc.token, sid, "poke", nil)
					assert.Equal(t, tc.status, resp.StatusCode, body)
					ch := resp.Header.Get("WWW-Authenticate")
					for _, want := range tc.challenge {
						assert.Contains(t, ch, want)
					}
					if tc.token != "" {
						assert.NotContains(t, body+ch, tc.token, "a refusal never echoes the token")
					}
				})
			}
			require.Empty(t, s.fake.Calls(), "no refused request ran a tool")
			require.Empty(t, s.rows(t, tenantA))
			require.Empty(t, s.rows(t, tenantB))

			// Another tenant's valid token cannot use A's session.
			tokenB := is.sign(t, is.claims(tenantB, convB, scopeTools, scopeWrite))
			resp, body := s.callTool(t, tokenB, sid, "poke", nil)
			assert.NotEqual(t, http.StatusOK, resp.StatusCode, body)
			require.Empty(t, s.fake.Calls())

			// The valid token: its calls land in A's table, whatever _meta
			// says; B's own calls land in B's.
			resp, body = s.callTool(t, good, sid, "poke", map[string]any{"tenant_id": tenantB, "conversation_id": convB})
			require.Equal(t, http.StatusOK, resp.StatusCode, body)
			assert.Contains(t, body, "poked")
			resp, body = s.callTool(t, good, sid, "peek", nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, body)
			assert.Equal(t, []string{"peek", "poke"}, sortedCopy(s.rows(t, tenantA)))
			assert.Empty(t, s.rows(t, tenantB))

			sidB := s.open(t, tokenB)
			resp, body = s.callTool(t, tokenB, sidB, "peek", nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, body)
			assert.Equal(t, []string{"peek"}, s.rows(t, tenantB))
			assert.Equal(t, []string{"peek", "poke"}, sortedCopy(s.rows(t, tenantA)))
			got, err := trace.List(context.Background(), s.db, trace.Filter{}, trace.WithTable(tableB))
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, convB, got[0].ConversationID)
		})
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

// bearerClient is an HTTP client that sends token.
func bearerClient(token string) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(req)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestScopesDecideTools: a token without the write scope lists only the
// read-only tool, and its call of the other is refused on the call itself
// (not only hidden from the listing), before it runs.
func TestScopesDecideTools(t *testing.T) {
	db, err := trace.OpenSQLite(t.TempDir() + "/traces.db")
	require.NoError(t, err)
	s := newAuthServer(t, db)
	tenant := uuid.NewString()
	s.migrate(t, tenant)
	ctx := testContext(t)

	readOnly := s.is.sign(t, s.is.claims(tenant, uuid.NewString(), scopeTools))
	c, err := Connect(ctx, HTTPTransport(s.url, bearerClient(readOnly)))
	require.NoError(t, err)
	defer c.Close()
	var names []string
	for _, tool := range c.Tools() {
		names = append(names, tool.Name)
	}
	assert.Equal(t, []string{"peek"}, names)
	_, err = c.Session().CallTool(ctx, &sdk.CallToolParams{Name: "poke", Arguments: map[string]any{}})
	require.NoError(t, err)
	resp, body := s.callTool(t, readOnly, s.open(t, readOnly), "poke", nil) // a legacy session: Connect speaks the stateless protocol
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `"isError":true`)
	assert.Contains(t, body, "not available to this caller")
	assert.Empty(t, s.fake.CallsTo("poke"))

	writer := s.is.sign(t, s.is.claims(tenant, uuid.NewString(), scopeTools, scopeWrite))
	w, err := Connect(ctx, HTTPTransport(s.url, bearerClient(writer)))
	require.NoError(t, err)
	defer w.Close()
	assert.Len(t, w.Tools(), 2)
	out, err := w.Resolve(ctx, llmtoolkit.Call{Name: "poke", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.Equal(t, "poked", out)
	assert.Len(t, s.fake.CallsTo("poke"), 1)
}

// TestProtectedResourceMetadata: the metadata is served without a token at
// the RFC 9728 path of the resource.
func TestProtectedResourceMetadata(t *testing.T) {
	db, err := trace.OpenSQLite(t.TempDir() + "/traces.db")
	require.NoError(t, err)
	s := newAuthServer(t, db)
	resp, err := http.Get(s.url + "/.well-known/oauth-protected-resource/mcp")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var meta map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&meta))
	assert.Equal(t, testResource, meta["resource"])
	assert.Equal(t, []any{testIssuer}, meta["authorization_servers"])
	assert.Equal(t, []any{scopeTools, scopeWrite}, meta["scopes_supported"])
}

// TestJWKSIsCached: verifying many tokens fetches the JWKS once; a token
// naming an unknown key triggers at most one more fetch, and is refused.
func TestJWKSIsCached(t *testing.T) {
	is := newIssuer(t)
	v := is.verifier(t)
	ctx := testContext(t)
	tenant := uuid.NewString()
	for range 20 {
		_, err := v.Verify(ctx, is.sign(t, is.claims(tenant, tenant, scopeTools)))
		require.NoError(t, err)
	}
	ec := signWith(t, jwt.SigningMethodES256, "ec-1", is.ecKey, is.claims(tenant, tenant, scopeTools))
	info, err := v.Verify(ctx, ec)
	require.NoError(t, err)
	assert.Equal(t, []string{scopeTools}, info.Scopes)
	assert.Equal(t, int64(1), is.fetches.Load())
	for range 5 {
		_, err = v.Verify(ctx, signWith(t, jwt.SigningMethodRS256, "rsa-9", is.stranger, is.claims(tenant, tenant)))
		require.ErrorIs(t, err, ErrInvalidToken)
	}
	assert.LessOrEqual(t, is.fetches.Load(), int64(2))
}

// TestAuthWithoutIdentityRefusesOverStdio: a server configured with
// WithBearerAuth but reached without HTTP (no token) serves nothing.
func TestAuthWithoutIdentityRefusesOverStdio(t *testing.T) {
	fake := fixture(t)
	ct := serveInMemory(t, fake, WithBearerAuth(AuthConfig{Verifier: VerifierFunc(nil), Identity: ClaimsIdentity("t", "c", "")}))
	_, err := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "v0"}, nil).Connect(testContext(t), ct, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "verified bearer token")
	assert.Empty(t, fake.Calls())
}

// TestMisconfiguredAuthFailsClosed: a configuration missing a required
// field answers 500, never serves unauthenticated.
func TestMisconfiguredAuthFailsClosed(t *testing.T) {
	fake := fixture(t)
	srv := httptest.NewServer(Handler(fake, WithBearerAuth(AuthConfig{Identity: ClaimsIdentity("t", "c", "")})))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
}

// BenchmarkJWTVerify: the per-call cost of verifying a JWT against the
// cached JWKS (no network: one fetch at start), for RS256 and ES256.
func BenchmarkJWTVerify(b *testing.B) {
	is := newIssuer(b)
	v := is.verifier(b)
	tenant := uuid.NewString()
	for _, tc := range []struct {
		name  string
		token string
	}{
		{"RS256", is.sign(b, is.claims(tenant, tenant, scopeTools))},
		{"ES256", signWith(b, jwt.SigningMethodES256, "ec-1", is.ecKey, is.claims(tenant, tenant, scopeTools))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := v.Verify(ctx, tc.token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	if n := is.fetches.Load(); n != 1 {
		b.Fatalf("the JWKS was fetched %d times", n)
	}
}

// BenchmarkAuthenticate: the whole check the bearer middleware makes per
// HTTP request (token parsed and verified, expiry and scopes, identity).
func BenchmarkAuthenticate(b *testing.B) {
	is := newIssuer(b)
	a := AuthConfig{Verifier: is.verifier(b), Identity: ClaimsIdentity("tenant_id", "conversation_id", ""),
		Resource: testResource, AuthorizationServers: []string{testIssuer}, Scopes: []string{scopeTools}}
	ba := newBearerAuth(a, http.NotFoundHandler(), slog.New(slog.DiscardHandler))
	tenant := uuid.NewString()
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Header.Set("Authorization", "Bearer "+is.sign(b, is.claims(tenant, tenant, scopeTools)))
	for b.Loop() {
		if _, status, _, msg := ba.authenticate(req); status != 0 {
			b.Fatal(msg)
		}
	}
}

// TestTenantsSeeOnlyTheirTools: a policy that gives each tenant its own
// tools: neither lists nor may call the other's.
func TestTenantsSeeOnlyTheirTools(t *testing.T) {
	db, err := trace.OpenSQLite(t.TempDir() + "/traces.db")
	require.NoError(t, err)
	a, b := uuid.NewString(), uuid.NewString()
	obj := map[string]any{"type": "object"}
	fake := llmtoolkittest.NewFake(nil).
		Add(llmtoolkit.MustTool("a_report", "A's.", obj), func(context.Context, llmtoolkit.Call) (string, error) { return "a", nil }).
		Add(llmtoolkit.MustTool("b_report", "B's.", obj), func(context.Context, llmtoolkit.Call) (string, error) { return "b", nil })
	owner := map[string]string{"a_report": a, "b_report": b}
	is := newIssuer(t)
	h := Handler(fake, WithBearerAuth(AuthConfig{
		Verifier: is.verifier(t), Identity: ClaimsIdentity("tenant_id", "conversation_id", ""),
		Resource: testResource, AuthorizationServers: []string{testIssuer},
		Tools: func(r llmtoolkit.Resolver, id Identity) llmtoolkit.Resolver {
			return llmtoolkit.Filter(r, func(t llmtoolkit.Tool) bool { return owner[t.Name] == id.Tenant })
		},
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	s := &authServer{url: srv.URL, fake: fake, db: db, is: is}
	ctx := testContext(t)
	tokenA := is.sign(t, is.claims(a, uuid.NewString()))
	c, err := Connect(ctx, HTTPTransport(srv.URL, bearerClient(tokenA)))
	require.NoError(t, err)
	defer c.Close()
	require.Len(t, c.Tools(), 1)
	assert.Equal(t, "a_report", c.Tools()[0].Name)
	_, body := s.callTool(t, tokenA, s.open(t, tokenA), "b_report", nil)
	assert.Contains(t, body, `"isError":true`)
	assert.Empty(t, fake.CallsTo("b_report"))
	out, err := c.Resolve(ctx, llmtoolkit.Call{Name: "a_report", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.Equal(t, "a", out)
}

// staticOAuth is an OAuth handler with a fixed token and no flow.
type staticOAuth struct{ token string }

func (h staticOAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: h.token, TokenType: "Bearer"}), nil
}

func (staticOAuth) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_ = resp.Body.Close()
	return errors.New("no authorization flow in this test")
}

// TestClientNeverLogsTokens: with WithOAuth, the token reaches the server
// in the Authorization header only: not in the client's logs (the SDK's
// debug logs included), not in an error, not in the request's _meta.
func TestClientNeverLogsTokens(t *testing.T) {
	db, err := trace.OpenSQLite(t.TempDir() + "/traces.db")
	require.NoError(t, err)
	var metaSeen atomic.Value
	logs := &lockedLog{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newAuthServer(t, db, WithPropagator(metaSpy{&metaSeen}), WithLogger(log))
	tenant := uuid.NewString()
	s.migrate(t, tenant)
	ctx := testContext(t)

	good := s.is.sign(t, s.is.claims(tenant, uuid.NewString(), scopeTools, scopeWrite))
	c, err := Connect(ctx, HTTPTransport(s.url, nil), WithOAuth(staticOAuth{good}), WithLogger(log), WithPropagator(metaSpy{&metaSeen}))
	require.NoError(t, err)
	out, err := c.Resolve(ctx, llmtoolkit.Call{Name: "poke", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.Equal(t, "poked", out)
	require.NoError(t, c.Close())

	bad := good[:len(good)-4] + "AAAA"
	_, err = Connect(ctx, HTTPTransport(s.url, nil), WithOAuth(staticOAuth{bad}), WithLogger(log))
	require.Error(t, err)
	for _, tok := range []string{good, bad, good[strings.LastIndex(good, ".")+1:]} {
		assert.NotContains(t, logs.String(), tok)
		assert.NotContains(t, err.Error(), tok)
		if m, ok := metaSeen.Load().(string); ok {
			assert.NotContains(t, m, tok)
		}
	}
	assert.Contains(t, logs.String(), "server session connected", "the SDK's logs were read")

	_, err = Connect(ctx, &sdk.CommandTransport{}, WithOAuth(staticOAuth{good}))
	require.Error(t, err, "WithOAuth needs the HTTP transport")
}

// metaSpy is a propagator that records every _meta the server receives.
type metaSpy struct{ seen *atomic.Value }

func (metaSpy) Inject(context.Context, map[string]any) {}

func (m metaSpy) Extract(ctx context.Context, meta map[string]any) context.Context {
	b, _ := json.Marshal(meta)
	prev, _ := m.seen.Load().(string)
	m.seen.Store(prev + string(b))
	return ctx
}

// lockedLog is a log sink safe for concurrent writes.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
