package mcp

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmtoolkit/llmtoolkit"
)

// TestConformanceAuthClient is the client the MCP conformance suite's
// client authorization scenarios drive (scripts/conformance_auth.sh): run
// as `mcp.test -test.run '^TestConformanceAuthClient$' SERVER_URL` with
// MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT) set, it connects
// to SERVER_URL with Connect and WithOAuth, lists the tools and calls
// test-tool. Without the variable it is skipped.
func TestConformanceAuthClient(t *testing.T) {
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if scenario == "" || flag.NArg() == 0 {
		t.Skip("run by scripts/conformance_auth.sh (MCP_CONFORMANCE_SCENARIO and the server URL)")
	}
	serverURL := flag.Arg(flag.NArg() - 1)
	var cctx map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &cctx); err != nil {
			t.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	h, err := conformanceOAuthHandler(scenario, cctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(ctx, HTTPTransport(serverURL, nil), WithOAuth(h), WithName("llmtoolkit-conformance"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Resolve(ctx, llmtoolkit.Call{Name: "test-tool", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
}

// conformanceOAuthHandler returns the OAuth handler for a scenario: client
// credentials for the client-credentials ones (the suite gives the client
// its credentials), else the authorization code flow with PKCE, trying a
// client ID metadata document, the pre-registered client the suite gives
// (if any), then dynamic registration.
func conformanceOAuthHandler(scenario string, cctx map[string]any) (auth.OAuthHandler, error) {
	id, _ := cctx["client_id"].(string)
	secret, _ := cctx["client_secret"].(string)
	if strings.HasPrefix(scenario, "auth/client-credentials") {
		return extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: id, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: secret}}})
	}
	const redirect = "http://localhost:3000/callback"
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:                    redirect,
		AuthorizationCodeFetcher:       followRedirect,
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: "https://conformance-test.local/client-metadata.json"},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{redirect}}},
		RequestRefreshToken: true,
	}
	if id != "" && secret != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: id, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: secret}}
	}
	return auth.NewAuthorizationCodeHandler(cfg)
}

// followRedirect plays the user's browser: the suite's authorization
// server redirects at once to the callback with the code.
func followRedirect(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.String() == "" {
		return nil, fmt.Errorf("the authorization server answered %s without a redirect", resp.Status)
	}
	q := loc.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
