package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// A Handler under bearer authorization mounted under a path, /mcp, beside
// other routes: its protected resource metadata is served at the root of
// the host, under /.well-known/, so that path is routed to the handler too
// (MetadataPath names it). A client refused at /mcp is told where it is,
// and finds it there.
func ExampleHTTPHandler_MetadataPath() {
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
	h := mcp.Handler(llmtoolkittest.NewFake(map[string]string{"status": "all good"}),
		mcp.WithBearerAuth(mcp.AuthConfig{
			Verifier:             verifier,
			Identity:             mcp.ClaimsIdentity("tenant_id", "conversation_id", ""),
			Resource:             "https://mcp.example.com/mcp",
			AuthorizationServers: []string{"https://auth.example.com"},
		}),
		mcp.WithAllowedOrigins(),
	)

	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	if p := h.MetadataPath(); p != "" {
		mux.Handle(p, h)
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/mcp", "application/json", nil)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	fmt.Println(h.MetadataPath())

	resp, err = http.Get(srv.URL + h.MetadataPath())
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&meta); err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, meta.Resource, meta.AuthorizationServers)
	// Output:
	// 401 Unauthorized
	// /.well-known/oauth-protected-resource/mcp
	// 200 OK https://mcp.example.com/mcp [https://auth.example.com]
}
