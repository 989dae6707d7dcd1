package mcp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"golang.org/x/time/rate"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// A Handler that requires OAuth bearer tokens: JWTs of an issuer, checked
// against its JWKS (here given inline; JWKSURL fetches and caches it),
// whose claims name the tenant and conversation of each call. A token
// without the write scope sees only the read-only tools, and each tenant
// may make 5 calls a second. A request without a token is told where the
// protected resource metadata is.
func ExampleWithBearerAuth() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	verifier, err := mcp.NewJWTVerifier(ctx, mcp.JWTConfig{
		Issuer:   "https://auth.example.com",
		Audience: "https://mcp.example.com/mcp",
		JWKS:     []byte(`{"keys":[{"kty":"EC","kid":"k1","alg":"ES256","crv":"P-256","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"}]}`),
	})
	if err != nil {
		log.Fatal(err)
	}
	tools := llmtoolkittest.NewFake(map[string]string{"status": "all good"})
	h := mcp.Handler(tools,
		mcp.WithBearerAuth(mcp.AuthConfig{
			Verifier:             verifier,
			Identity:             mcp.ClaimsIdentity("tenant_id", "conversation_id", ""),
			Resource:             "https://mcp.example.com/mcp",
			AuthorizationServers: []string{"https://auth.example.com"},
			Scopes:               []string{"mcp:tools"},
			ScopesSupported:      []string{"mcp:write"},
			Tools: func(r llmtoolkit.Resolver, id mcp.Identity) llmtoolkit.Resolver {
				if id.HasScope("mcp:write") {
					return r
				}
				return llmtoolkit.ReadOnly(r)
			},
		}),
		mcp.WithRateLimits(mcp.RateLimits{Tenant: mcp.Limit{Rate: rate.Limit(5), Burst: 5}}),
		mcp.WithAllowedOrigins(),
	)

	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", nil)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	fmt.Println(resp.Header.Get("WWW-Authenticate"))
	// Output:
	// 401 Unauthorized
	// Bearer scope="mcp:tools", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
}
