package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// httpUsage is the part of mcp's usage about --http.
const httpUsage = `
With --http ADDR (host:port), the tools are served over MCP's streamable
HTTP transport on ADDR instead of stdin/stdout, until the process is
interrupted. Every request then needs an OAuth 2.1 bearer token, a JWT
signed by a key of --jwks-url, issued by --issuer for --resource (its
audience), granting --scopes; its claims --tenant-claim and
--conversation-claim (UUIDs) name the tenant and conversation the calls
are attributed to (traces included). A token without --write-scope (when
given) sees and may call only the read-only tools. The protected resource
metadata (RFC 9728) is served at /.well-known/oauth-protected-resource.
--rate bounds each tenant's calls per second (and --tool-rate each
tenant's calls to each tool): a call over it is answered with an error
result saying when to retry.

On an address other than loopback, the server refuses to start without
--issuer unless --insecure-no-auth is given, and says on every start
whether and how it checks tokens. Browser requests from another Origin
than the server's own or an --allowed-origin are refused, and requests
reaching a loopback address with another Host (DNS rebinding) too.
`

// httpFlags are the flags of 'llmtoolkit mcp --http'.
type httpFlags struct {
	addr, issuer, resource, jwksURL, scopes, writeScope string
	tenantClaim, conversationClaim                      string
	insecureNoAuth                                      bool
	origins                                             []string
	rate, toolRate                                      float64
}

// addHTTPFlags adds the --http flags to fs.
func addHTTPFlags(fs *flag.FlagSet) *httpFlags {
	f := &httpFlags{}
	fs.StringVar(&f.addr, "http", "", "serve MCP over streamable HTTP on this host:port instead of stdio")
	fs.StringVar(&f.issuer, "issuer", "", "with --http: the OAuth authorization server whose JWTs are accepted (iss)")
	fs.StringVar(&f.resource, "resource", "", "with --http: this server's URL as clients reach it, the tokens' audience (default http://ADDR/)")
	fs.StringVar(&f.jwksURL, "jwks-url", "", "with --http: the issuer's JWKS (default ISSUER/.well-known/jwks.json)")
	fs.StringVar(&f.scopes, "scopes", "mcp:tools", "with --http: scopes every token must grant, space- or comma-separated")
	fs.StringVar(&f.writeScope, "write-scope", "", "with --http: the scope a token needs to see and call the tools that change things")
	fs.StringVar(&f.tenantClaim, "tenant-claim", "tenant_id", "with --http: the token claim naming the tenant (a UUID)")
	fs.StringVar(&f.conversationClaim, "conversation-claim", "conversation_id", "with --http: the token claim naming the conversation (a UUID)")
	fs.BoolVar(&f.insecureNoAuth, "insecure-no-auth", false, "with --http: serve without authorization on a non-loopback address")
	fs.Func("allowed-origin", "with --http: a browser Origin allowed besides the server's own (repeatable)", func(s string) error {
		f.origins = append(f.origins, s)
		return nil
	})
	fs.Float64Var(&f.rate, "rate", 0, "with --http: calls per second each tenant may make (0: no limit)")
	fs.Float64Var(&f.toolRate, "tool-rate", 0, "with --http: calls per second each tenant may make to each tool (0: no limit)")
	return f
}

// check returns what is wrong with the flags, for a usage error.
func (f *httpFlags) check() error {
	if f.addr == "" {
		if f.issuer != "" || f.insecureNoAuth || len(f.origins) > 0 || f.rate != 0 || f.toolRate != 0 || f.resource != "" || f.jwksURL != "" || f.writeScope != "" {
			return errors.New("--issuer, --resource, --jwks-url, --write-scope, --insecure-no-auth, --allowed-origin, --rate and --tool-rate need --http ADDR")
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(f.addr); err != nil {
		return fmt.Errorf("--http %q: %v (write host:port, e.g. 127.0.0.1:8080)", f.addr, err)
	}
	if f.issuer != "" && f.insecureNoAuth {
		return errors.New("--insecure-no-auth and --issuer contradict each other")
	}
	if f.issuer == "" && (f.jwksURL != "" || f.writeScope != "") {
		return errors.New("--jwks-url and --write-scope need --issuer")
	}
	if f.issuer != "" && f.resource == "" && !isLoopback(f.addr) {
		return errors.New("--issuer on an address other than loopback needs --resource URL, this server's URL as clients reach it (the tokens' audience)")
	}
	if f.rate < 0 || f.toolRate < 0 {
		return errors.New("--rate and --tool-rate must not be negative")
	}
	if f.issuer == "" && !f.insecureNoAuth && !isLoopback(f.addr) {
		return fmt.Errorf("refusing to serve on %s, which is not a loopback address, without authorization: give --issuer (and --resource, --jwks-url) so that every request needs a token, or --insecure-no-auth to let anyone who reaches it run every tool, bash included", f.addr)
	}
	return nil
}

// isLoopback reports whether addr's host is "localhost" or a loopback IP.
// An empty host (every interface) is not.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveHTTP serves r on f.addr until ctx is done.
func serveHTTP(ctx context.Context, f *httpFlags, r llmtoolkit.Resolver, opts []mcp.Option, log *slog.Logger, stderr io.Writer) int {
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		fmt.Fprintf(stderr, "llmtoolkit mcp: %v\n", err)
		return exitError
	}
	base := "http://" + ln.Addr().String() + "/"
	opts = append(opts, mcp.WithAllowedOrigins(f.origins...))
	if f.rate > 0 || f.toolRate > 0 {
		opts = append(opts, mcp.WithRateLimits(mcp.RateLimits{
			Tenant: mcp.Limit{Rate: rate.Limit(f.rate), Burst: max(1, int(f.rate))},
			Tool:   mcp.Limit{Rate: rate.Limit(f.toolRate), Burst: max(1, int(f.toolRate))},
		}))
	}
	authCtx, stopAuth := context.WithCancel(ctx)
	defer stopAuth()
	var authMsg string
	if f.issuer != "" {
		resource := f.resource
		if resource == "" {
			resource = base
		}
		jwks := f.jwksURL
		if jwks == "" {
			jwks = strings.TrimRight(f.issuer, "/") + "/.well-known/jwks.json"
		}
		v, err := mcp.NewJWTVerifier(authCtx, mcp.JWTConfig{Issuer: f.issuer, Audience: resource, JWKSURL: jwks, Logger: log})
		if err != nil {
			_ = ln.Close()
			fmt.Fprintf(stderr, "llmtoolkit mcp: %v\n", err)
			return exitError
		}
		scopes := strings.FieldsFunc(f.scopes, func(r rune) bool { return r == ',' || r == ' ' })
		cfg := mcp.AuthConfig{Verifier: v, Identity: mcp.ClaimsIdentity(f.tenantClaim, f.conversationClaim, ""),
			Resource: resource, AuthorizationServers: []string{f.issuer}, Scopes: scopes}
		if ws := f.writeScope; ws != "" {
			cfg.ScopesSupported = []string{ws}
			cfg.Tools = func(r llmtoolkit.Resolver, id mcp.Identity) llmtoolkit.Resolver {
				if id.HasScope(ws) {
					return r
				}
				return llmtoolkit.ReadOnly(r)
			}
		}
		opts = append(opts, mcp.WithBearerAuth(cfg))
		authMsg = fmt.Sprintf("authorization: bearer JWTs from %s for %s (keys %s), scopes %q", f.issuer, resource, jwks, strings.Join(scopes, " "))
		if f.writeScope != "" {
			authMsg += fmt.Sprintf(", tools that change things only with %q", f.writeScope)
		}
	}
	// The Origin line comes first: "serving MCP on" is the last line on
	// start, so a reader that waits for it has read everything before it.
	fmt.Fprintf(stderr, "llmtoolkit mcp: Origin check on (allowed: the server's own%s), DNS-rebinding protection on\n", originList(f.origins))
	switch {
	case f.issuer != "":
		fmt.Fprintf(stderr, "llmtoolkit mcp: serving MCP on %s; %s; tenant from claim %q, conversation from claim %q\n",
			base, authMsg, f.tenantClaim, f.conversationClaim)
	case f.insecureNoAuth && !isLoopback(f.addr):
		fmt.Fprintf(stderr, "llmtoolkit mcp: WARNING: serving MCP on %s WITHOUT AUTHORIZATION (--insecure-no-auth): anyone who can reach %s may call every tool, bash included\n",
			base, f.addr)
	default:
		fmt.Fprintf(stderr, "llmtoolkit mcp: serving MCP on %s without authorization: every program on this machine may call every tool, bash included (give --issuer to require tokens)\n", base)
	}

	srv := &http.Server{Handler: mcp.Handler(r, opts...), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	served := guard.Go("mcp http server", func() error { return srv.Serve(ln) }, nil)
	select {
	case err = <-served:
	case <-ctx.Done():
		shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutCtx)
		err = <-served
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("MCP server stopped", "err", err)
		return exitError
	}
	log.Info("MCP server stopped")
	return exitOK
}

func originList(origins []string) string {
	if len(origins) == 0 {
		return ""
	}
	return ", " + strings.Join(origins, ", ")
}
