package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/trace"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// replicaEnv makes the test binary serve the replica fixture over HTTP
// (see runReplica); replicaDSNEnv, when set, has it record every call to
// that PostgreSQL database with trace.Record.
const (
	replicaEnv    = "LLMTOOLKIT_MCP_TEST_REPLICA"
	replicaDSNEnv = "LLMTOOLKIT_MCP_TEST_REPLICA_DSN"
	postgresDSN   = "LLMTOOLKIT_TEST_POSTGRES_DSN"

	// The tenant and conversation of every replica's calls.
	replicaTenant       = "5d0c2a8e-7d7b-4d86-9a43-1f1b5b1b9c01"
	replicaConversation = "0e9f5a55-3f37-4a4e-8d2b-6f0e2c8d7a10"
)

// replicaTools: "work" sleeps the milliseconds it is given and answers
// the id it is given (a call of some length, so that a replica killed
// mid-run has calls in flight); echo answers at once.
func replicaTools() llmtoolkit.Resolver {
	f := newFixture()
	f.Add(llmtoolkit.MustTool("work", "Works a while.", map[string]any{
		"type": "object",
		"properties": map[string]any{
			"id": map[string]any{"type": "string"},
			"ms": map[string]any{"type": "integer", "minimum": 0, "maximum": 1000},
		},
		"required": []any{"id"},
	}), func(ctx context.Context, c llmtoolkit.Call) (string, error) {
		ms, _ := c.Arguments["ms"].(float64)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return c.Arguments["id"].(string), nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	return f
}

// runReplica serves replicaTools over HTTP on a loopback port, as one of
// several stateless replicas, until SIGTERM: then it drains (its calls in
// flight finish, new ones are refused with 503) and exits. It prints
// "listening on ADDR" once ready.
func runReplica() error {
	var r llmtoolkit.Resolver = replicaTools()
	if dsn := os.Getenv(replicaDSNEnv); dsn != "" {
		db, err := trace.OpenPostgres(dsn)
		if err != nil {
			return err
		}
		// The replicas serve one conversation (the test's schema is its
		// own). WithIdempotentCalls: a retried call whose first replica
		// wrote its row before dying leaves one row (the second is
		// skipped, counted and logged), its call ID the client's, from
		// the request's _meta (CallIDMetaKey).
		rec := trace.Record(r, db, trace.WithDefaultConversation(replicaTenant, replicaConversation), trace.WithIdempotentCalls())
		defer rec.Close()
		r = rec
	}
	h := Handler(r, WithStateless(), WithName("replica"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	fmt.Printf("listening on %s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	drain, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Shutdown(drain); err != nil {
		return err
	}
	return srv.Shutdown(drain)
}

// replica is a replica process.
type replica struct {
	cmd    *exec.Cmd
	addr   string
	exited chan struct{} // closed when the process has exited
	err    error         // its exit status, once exited
}

// startReplica re-runs the test binary as a replica; it is killed at the
// end of the test if still running.
func startReplica(t testing.TB, dsn string) *replica {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), replicaEnv+"=1", replicaDSNEnv+"="+dsn)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	rp := &replica{cmd: cmd, exited: make(chan struct{})}
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the replica did not start")
	rp.addr = strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	go func() {
		rp.err = cmd.Wait()
		close(rp.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-rp.exited
	})
	return rp
}

// roundRobin is a plain round-robin reverse proxy over the replicas: no
// session affinity, no health checks. A replica that is down answers
// 502 Bad Gateway through it.
func roundRobin(t testing.TB, replicas []*replica) *httptest.Server {
	var next atomic.Uint64
	targets := make([]*url.URL, len(replicas))
	for i, rp := range replicas {
		targets[i] = &url.URL{Scheme: "http", Host: rp.addr}
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(targets[(next.Add(1)-1)%uint64(len(targets))])
			pr.Out.Host = pr.In.Host
		},
		ErrorLog: nil,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv
}

// replicaSchema makes a PostgreSQL schema for the test, migrated, and
// returns the DSN that uses it and a handle on it.
func replicaSchema(t testing.TB) (string, *gorm.DB) {
	t.Helper()
	dsn := os.Getenv(postgresDSN)
	if dsn == "" {
		t.Skip(postgresDSN + " is not set: the replica test records to PostgreSQL")
	}
	admin, err := gorm.Open(postgres.Open(dsn), &gorm.Config{Logger: logger.Discard})
	require.NoError(t, err)
	schema := "mcp_replicas_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	require.NoError(t, admin.Exec("CREATE SCHEMA "+schema).Error)
	dsn += " search_path=" + schema
	db, err := trace.OpenPostgres(dsn)
	require.NoError(t, err)
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
		_ = admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
		if sqlDB, err := admin.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	require.NoError(t, trace.Migrate(db, trace.WithIdempotentCalls()))
	return dsn, db
}

// callStats counts what the clients saw.
type callStats struct {
	retried, session atomic.Int64
	mu               sync.Mutex
	errs             []string
	completed        []string // ids of the calls answered
}

// callWithRetry makes the call on cs, retrying a failed attempt (a
// replica down, or draining) with a short pause, up to a bound.
func callWithRetry(ctx context.Context, cs *sdk.ClientSession, params *sdk.CallToolParams, st *callStats) (*sdk.CallToolResult, error) {
	var err error
	for attempt := range 50 {
		if attempt > 0 {
			st.retried.Add(1)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		var res *sdk.CallToolResult
		res, err = cs.CallTool(ctx, params)
		if err == nil {
			return res, nil
		}
		if errors.Is(err, sdk.ErrSessionMissing) || strings.Contains(err.Error(), "session") {
			st.session.Add(1)
		}
		st.mu.Lock()
		if len(st.errs) < 5 {
			st.errs = append(st.errs, err.Error())
		}
		st.mu.Unlock()
	}
	return nil, err
}

// TestReplicasBehindRoundRobin: three replica processes behind a plain
// round-robin reverse proxy, recording to one PostgreSQL database: 1,000
// calls of the official Go SDK client, half on the current protocol and
// half legacy (the replicas serve them without sessions, WithStateless),
// meet no session error. One replica is SIGKILLed a third of the way
// through and another stopped with SIGTERM (it drains) two thirds of the
// way: their calls fail retriably, the clients retry them, every call
// completes, and the audit table holds exactly one completed row per call.
// The retries are at-least-once: a call whose replica died after writing
// its row but before its answer arrived runs again. The replicas record
// with trace.WithIdempotentCalls and each call carries the client's id in
// its _meta (CallIDMetaKey, the same on every retry), so its second
// completed row is skipped, counted and logged.
func TestReplicasBehindRoundRobin(t *testing.T) {
	if testing.Short() {
		t.Skip("three processes and 1,000 calls: not in -short")
	}
	dsn, db := replicaSchema(t)
	replicas := []*replica{startReplica(t, dsn), startReplica(t, dsn), startReplica(t, dsn)}
	proxy := roundRobin(t, replicas)
	ctx := testContext(t)

	const calls, clients = 1000, 10
	st := &callStats{}
	var done atomic.Int64
	var killOnce, termOnce sync.Once
	work := make(chan int)
	var wg sync.WaitGroup
	for c := range clients {
		version := CurrentProtocolVersion
		if c%2 == 1 {
			version = "2025-11-25"
		}
		cs := sdkSession(t, proxy.URL, version, nil)
		if version != CurrentProtocolVersion {
			require.Empty(t, cs.ID(), "a legacy client of a stateless replica holds no session")
		}
		wg.Go(func() {
			for i := range work {
				id := fmt.Sprintf("call-%04d-%s", i, version)
				params := &sdk.CallToolParams{Name: "work", Arguments: map[string]any{"id": id, "ms": 5}}
				params.Meta = sdk.Meta{CallIDMetaKey: id}
				res, err := callWithRetry(ctx, cs, params, st)
				if !assert.NoError(t, err, id) || !assert.False(t, res.IsError, id) {
					continue
				}
				assert.Equal(t, id, res.Content[0].(*sdk.TextContent).Text)
				st.mu.Lock()
				st.completed = append(st.completed, id)
				st.mu.Unlock()
				switch n := done.Add(1); {
				case n == calls/3:
					killOnce.Do(func() { require.NoError(t, replicas[1].cmd.Process.Kill()) })
				case n == 2*calls/3:
					termOnce.Do(func() { require.NoError(t, replicas[2].cmd.Process.Signal(syscall.SIGTERM)) })
				}
			}
		})
	}
	for i := range calls {
		work <- i
	}
	close(work)
	wg.Wait()
	<-replicas[1].exited
	require.Error(t, replicas[1].err, "SIGKILLed")
	select {
	case <-replicas[2].exited:
		require.NoError(t, replicas[2].err, "the replica stopped with SIGTERM drains and exits cleanly")
	case <-time.After(15 * time.Second):
		t.Fatal("the replica stopped with SIGTERM did not exit")
	}
	t.Logf("%d calls completed, %d attempts retried, %d session errors; first errors: %q",
		len(st.completed), st.retried.Load(), st.session.Load(), st.errs)

	assert.Len(t, st.completed, calls)
	assert.Zero(t, st.session.Load(), "session errors")
	assert.Positive(t, st.retried.Load(), "the killed replica's calls were retried")

	var rows []struct {
		ID string
		N  int
	}
	require.NoError(t, db.Raw(`SELECT call_id AS id, count(*) AS n FROM tool_traces
		WHERE tool_name = 'work' AND result_type = 'ok' GROUP BY 1`).Scan(&rows).Error)
	var failed int64
	require.NoError(t, db.Raw(`SELECT count(*) FROM tool_traces WHERE tool_name = 'work' AND result_type <> 'ok'`).Scan(&failed).Error)
	t.Logf("%d rows of failed attempts (each keeps its row)", failed)
	perCall := make(map[string]int, len(rows))
	for _, r := range rows {
		// The server binds the client's ID to the arguments (ID#digest).
		id, _, _ := strings.Cut(r.ID, "#")
		perCall[id] += r.N
	}
	var missing, twice []string
	for _, id := range st.completed {
		switch perCall[id] {
		case 1:
		case 0:
			missing = append(missing, id)
		default:
			twice = append(twice, id)
		}
	}
	slices.Sort(missing)
	assert.Empty(t, missing, "completed calls without a row")
	assert.Empty(t, twice, "completed calls with more than one row")
	assert.Len(t, perCall, calls, "no row of a call that did not complete")
}

// TestReplicaThroughput measures calls/s and latency of a trivial tool
// (echo) through the round-robin proxy with 1, 2 and 3 replica processes:
// a fixed 1,500 calls each from 12 clients of the current protocol, the
// whole at most 60 s. A measure, not a check (the figures depend on the
// machine): it runs with LLMTOOLKIT_STRESS=1 and logs them.
func TestReplicaThroughput(t *testing.T) {
	requireStress(t)
	const calls, clients = 1500, 12
	deadline := time.Now().Add(60 * time.Second)
	for n := 1; n <= 3; n++ {
		replicas := make([]*replica, n)
		for i := range replicas {
			replicas[i] = startReplica(t, "")
		}
		proxy := roundRobin(t, replicas)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		sessions := make([]*sdk.ClientSession, clients)
		for i := range sessions {
			sessions[i] = sdkSession(t, proxy.URL, CurrentProtocolVersion, nil)
		}
		latencies := make([]time.Duration, calls)
		work := make(chan int)
		var wg sync.WaitGroup
		start := time.Now()
		for _, cs := range sessions {
			wg.Go(func() {
				for i := range work {
					t0 := time.Now()
					res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
					latencies[i] = time.Since(t0)
					if !assert.NoError(t, err) || !assert.False(t, res.IsError) {
						return
					}
				}
			})
		}
	feed:
		for i := range calls {
			select {
			case work <- i:
			case <-ctx.Done():
				break feed
			}
		}
		close(work)
		wg.Wait()
		elapsed := time.Since(start)
		require.NoError(t, ctx.Err(), "the measure took more than 60 s")
		cancel()
		slices.Sort(latencies)
		t.Logf("replicas=%d calls=%d clients=%d: %.0f calls/s, p50 %v, p99 %v",
			n, calls, clients, float64(calls)/elapsed.Seconds(),
			latencies[calls/2].Round(10*time.Microsecond), latencies[calls*99/100].Round(10*time.Microsecond))
		for _, cs := range sessions {
			_ = cs.Close()
		}
		for _, rp := range replicas {
			_ = rp.cmd.Process.Signal(syscall.SIGTERM)
			<-rp.exited
		}
	}
}
