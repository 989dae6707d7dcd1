package mcp

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// WithOAuth makes [Connect] reach a server that requires OAuth 2.1
// authorization, through h, one of the SDK's handlers:
// [auth.AuthorizationCodeHandler] (authorization code with PKCE; the client
// registered by a client ID metadata document, a pre-registered client or
// dynamic registration, in that order, whichever it is configured with)
// or extauth.ClientCredentialsHandler (service to service), or the host's
// own [auth.OAuthHandler]. On the server's first 401 (or a 403 asking for
// more scope) the handler discovers the server's protected resource
// metadata and its authorization server, obtains a token, and the request
// is sent again; each later request carries the token, which the
// handler's token source refreshes when it expires (with the refresh
// token, when the authorization server issued one).
//
// It applies to the streamable HTTP transport ([HTTPTransport] or an
// [sdk.StreamableClientTransport] without an OAuthHandler of its own);
// Connect refuses it with another transport. This package never logs,
// traces nor puts in an error a token: it never sees them (the SDK's
// transport sets the Authorization header), and the trace context
// [WithPropagator] writes goes in _meta, not in headers.
func WithOAuth(h auth.OAuthHandler) Option { return func(c *config) { c.oauth = h } }

// oauthTransport returns transport with h as its OAuth handler.
func oauthTransport(transport sdk.Transport, h auth.OAuthHandler) (sdk.Transport, error) {
	if h == nil {
		return transport, nil
	}
	t, ok := transport.(*sdk.StreamableClientTransport)
	if !ok {
		return nil, errors.New("mcp: WithOAuth needs the streamable HTTP transport (HTTPTransport)")
	}
	if t.OAuthHandler != nil && t.OAuthHandler != h {
		return nil, errors.New("mcp: WithOAuth given with a transport that has an OAuthHandler of its own")
	}
	c := *t
	c.OAuthHandler = h
	return &c, nil
}
