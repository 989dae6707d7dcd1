package mcp

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// logBuffer is a log sink several goroutines write to.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tenantRows lists tenant's rows as "tool result_type content".
func (s *authServer) tenantRows(t *testing.T, tenant string) []string {
	t.Helper()
	ctx := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"tenant_id": tenant} })
	got, err := trace.List(ctx, s.db, trace.Filter{}, trace.WithTableFrom(tenantTable(s.suffix)))
	require.NoError(t, err)
	var out []string
	for _, tr := range got {
		content, _ := tr.Result["content"].(string)
		if content == "" {
			content, _ = tr.Result["error"].(string)
		}
		out = append(out, tr.ToolName+" "+tr.ResultType+" "+content)
	}
	return out
}

// TestRefusedCallsAreRecordedAndLogged: a call the ToolPolicy refused
// (its token's scopes too narrow) or the rate limit refused left no audit
// row; the policy's refusal reached the log, the Recorder never. Each is
// now a refused row (result type error, the reason as its error) in the
// caller's tenant table, and a log line without the token; the tool does
// not run.
func TestRefusedCallsAreRecordedAndLogged(t *testing.T) {
	db, err := trace.OpenSQLite(t.TempDir() + "/traces.db")
	require.NoError(t, err)
	var logs logBuffer
	s := newAuthServer(t, db, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		WithRateLimits(RateLimits{Tools: map[string]Limit{"peek": {Rate: rate.Every(time.Hour), Burst: 1}}}))
	tenant := uuid.NewString()
	s.migrate(t, tenant)
	readOnly := s.is.sign(t, s.is.claims(tenant, uuid.NewString(), scopeTools))
	sid := s.open(t, readOnly)

	for _, tool := range []string{"poke", "peek", "peek"} {
		resp, body := s.callTool(t, readOnly, sid, tool, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
	}
	assert.Empty(t, s.fake.CallsTo("poke"), "the policy's refusal did not run")
	assert.Len(t, s.fake.CallsTo("peek"), 1, "the rate limit's refusal did not run")

	rows := s.tenantRows(t, tenant)
	require.Len(t, rows, 3, "every call has its row: %q", rows)
	assert.Contains(t, strings.Join(rows, "\n"), "peek ok peeked")
	assert.Regexp(t, `(?m)^poke error tool "poke" is not available to this caller`, strings.Join(rows, "\n"))
	assert.Regexp(t, `(?m)^peek error rate limit: too many calls`, strings.Join(rows, "\n"))

	assert.Contains(t, logs.String(), "tool call refused: the tool is not available to the caller")
	assert.Contains(t, logs.String(), "tool call refused: over its rate limit")
	assert.NotContains(t, logs.String(), readOnly, "the token is never logged")
}

// TestBearerRefusalsAreExplained: WithBearerAuth refused a token without
// a log line, and the official SDK's client read only "Unauthorized". Each
// refusal is now logged (status, error, reason, never the token), and its
// reason reaches the client: in the challenge's error_description (RFC
// 6750) and as a JSON-RPC error body, which the SDK's client reports.
func TestBearerRefusalsAreExplained(t *testing.T) {
	db, err := trace.OpenSQLite(t.TempDir() + "/traces.db")
	require.NoError(t, err)
	var logs logBuffer
	s := newAuthServer(t, db, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	tenant := uuid.NewString()
	expiredClaims := s.is.claims(tenant, uuid.NewString(), scopeTools)
	expiredClaims["exp"] = time.Now().Add(-time.Hour).Unix()
	tests := []struct {
		name, token, reason string
	}{
		{"expired", s.is.sign(t, expiredClaims), "expired"},
		{"no scope", s.is.sign(t, s.is.claims(tenant, uuid.NewString())), "insufficient scope"},
		{"garbage", "not-a-jwt-at-all", "invalid token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hc := &http.Client{Transport: bearerRoundTripper{token: tc.token}}
			c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
			_, err := c.Connect(testContext(t), &sdk.StreamableClientTransport{Endpoint: s.url, HTTPClient: hc, MaxRetries: -1}, nil)
			require.Error(t, err)
			t.Logf("the SDK client's error: %v", err)
			assert.Contains(t, err.Error(), tc.reason, "the client reads why")
			assert.Contains(t, logs.String(), "request refused by the bearer authorization")
			assert.NotContains(t, logs.String(), tc.token, "the token is never logged")
		})
	}
}

type bearerRoundTripper struct{ token string }

func (b bearerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}
