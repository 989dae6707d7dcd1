package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// TestMCPHTTPRefusesNonLoopbackWithoutAuth: on an address other than
// loopback, --http does not start without --issuer or --insecure-no-auth.
func TestMCPHTTPRefusesNonLoopbackWithoutAuth(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0"} {
		res := runBin(t, "", "mcp", "--root", projectDir(t), "--http", addr)
		assert.Equal(t, exitUsage, res.code, addr)
		assert.Contains(t, res.stderr, "without authorization", addr)
	}
	res := runBin(t, "", "mcp", "--root", projectDir(t), "--http", "0.0.0.0:0", "--issuer", "https://issuer.example")
	assert.Equal(t, exitUsage, res.code)
	assert.Contains(t, res.stderr, "--resource")
	res = runBin(t, "", "mcp", "--insecure-no-auth")
	assert.Equal(t, exitUsage, res.code)
	assert.Contains(t, res.stderr, "need --http")
}

// startHTTP starts `llmtoolkit mcp --http` and returns its URL (read from
// what it prints on start) and what it printed.
func startHTTP(t *testing.T, args ...string) (string, *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*mcpTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin, append([]string{"mcp", "--root", projectDir(t)}, args...)...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", stderr.String())
		}
	})
	re := regexp.MustCompile(`serving MCP on (http://[^ ;]+)`)
	deadline := time.Now().Add(mcpTimeout)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], stderr
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the server did not say where it serves:\n%s", stderr.String())
	return "", nil
}

// TestMCPHTTPWithoutAuthOnLoopback: on loopback without --issuer it
// serves, says so, and refuses a browser request from another Origin.
func TestMCPHTTPWithoutAuthOnLoopback(t *testing.T) {
	url, stderr := startHTTP(t, "--http", "127.0.0.1:0")
	assert.Contains(t, stderr.String(), "without authorization")
	assert.Contains(t, stderr.String(), "Origin check on")
	c, err := mcp.Connect(context.Background(), mcp.HTTPTransport(url, nil))
	require.NoError(t, err)
	defer c.Close()
	assert.NotEmpty(t, c.Tools())

	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	require.NoError(t, err)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// TestMCPHTTPWithAuth: with --issuer, a request without a token is
// answered 401 with the challenge; a token without --write-scope sees
// only the read-only tools; one with it sees them all.
func TestMCPHTTPWithAuth(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	jwks, err := json.Marshal(map[string]any{"keys": []any{map[string]any{"kty": "EC", "kid": "k", "alg": "ES256", "crv": "P-256",
		"x": b64(key.X.FillBytes(make([]byte, 32))), "y": b64(key.Y.FillBytes(make([]byte, 32)))}}})
	require.NoError(t, err)
	is := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(jwks) }))
	defer is.Close()

	const resource = "http://mcp.test/mcp"
	url, stderr := startHTTP(t, "--http", "127.0.0.1:0", "--issuer", is.URL, "--jwks-url", is.URL+"/jwks",
		"--resource", resource, "--write-scope", "mcp:write")
	assert.Contains(t, stderr.String(), "authorization: bearer JWTs from "+is.URL)

	resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp"`)

	token := func(scope string) string {
		now := time.Now()
		tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": is.URL, "aud": resource, "sub": "u",
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "scope": scope,
			"tenant_id": uuid.NewString(), "conversation_id": uuid.NewString()})
		tok.Header["kid"] = "k"
		s, err := tok.SignedString(key)
		require.NoError(t, err)
		return s
	}
	count := func(scope string) (all, readOnly int) {
		hc := &http.Client{Transport: bearer{token(scope)}}
		c, err := mcp.Connect(context.Background(), mcp.HTTPTransport(url, hc))
		require.NoError(t, err)
		defer c.Close()
		for _, tool := range c.Tools() {
			all++
			if tool.Annotations != nil && tool.Annotations.ReadOnly {
				readOnly++
			}
		}
		return all, readOnly
	}
	all, ro := count("mcp:tools")
	assert.Equal(t, ro, all, "only read-only tools without the write scope")
	assert.Positive(t, all)
	all, ro = count("mcp:tools mcp:write")
	assert.Greater(t, all, ro)
}

type bearer struct{ token string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}
