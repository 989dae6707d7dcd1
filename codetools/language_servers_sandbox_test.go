package codetools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/readcheck"
	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// excluding returns a context whose calls exclude globs, as agent's deny
// rules set them.
func excluding(globs ...string) context.Context {
	return llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.ExcludedPaths = globs })
}

func needServerSandbox(t *testing.T) {
	t.Helper()
	if len(sandbox.Available()) == 0 {
		t.Skip("no sandbox backend runs here: the servers run unconfined")
	}
}

// TestServerProcessCannotOpenExcludedFiles: the server process itself
// (the fake, opening files as a server would) reads the root's other files
// but not a file or a folder's file the host excludes, nor a hard link's
// other name; before the exclusion reaches it (a call without it) it
// did read them, and the first call carrying it restarts the server.
func TestServerProcessCannotOpenExcludedFiles(t *testing.T) {
	needServerSandbox(t)
	c := newTools(t, WithLanguageServers(fakeServer(t, "ok")), WithLanguageServerLimits(LanguageServerLimits{Settle: 20 * time.Second}))
	writeTestFiles(t, c.Root(), map[string]string{
		"secret/deep/key.txt": "TOPSECRET-DIR", ".env": "TOPSECRET-FILE", "open.txt": "visible",
	})
	require.NoError(t, os.Link(c.Root()+"/.env", c.Root()+"/env-hardlink"))
	text := "READ open.txt\nREAD secret/deep/key.txt\nREAD .env\nREAD env-hardlink\n"

	res := llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "a.fake", "content": text}})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "read: TOPSECRET-DIR", "the control: without exclusions the server reads everything")
	assert.Contains(t, res.Content, "read: TOPSECRET-FILE")

	for i, ctx := range []context.Context{excluding("secret/**", "**/.env"), excluding("secret/**", "**/.env")} {
		res = llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "a.fake", "content": text + strings.Repeat("\n", i+1)}})
		require.False(t, res.IsError, res.Content)
		assert.Contains(t, res.Content, "read: visible", "call %d", i)
		assert.NotContains(t, res.Content, "TOPSECRET", "call %d: the server opened an excluded file", i)
		assert.Equal(t, 3, strings.Count(res.Content, "cannot read"), "call %d: %s", i, res.Content)
	}

	// A file a glob matches, made by bash after the server started: the
	// servers are restarted, and the new view hides it too.
	ctx := excluding("secret/**", "**/.env")
	res = llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "mkdir -p sub && echo TOPSECRET-NEW > sub/.env"}})
	require.False(t, res.IsError, res.Content)
	res = llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "a.fake", "content": "READ open.txt\nREAD sub/.env\n"}})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "read: visible")
	assert.NotContains(t, res.Content, "TOPSECRET-NEW", "a file made after the server started was readable to it")

	// A hidden file replaced under its name (an editor's atomic save, mv):
	// the cover on the old file is gone with it, the servers restart.
	res = llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "echo TOPSECRET-SWAP > .env.new && mv .env.new .env"}})
	require.False(t, res.IsError, res.Content)
	res = llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "a.fake", "content": "READ open.txt\nREAD .env\n"}})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "read: visible")
	assert.NotContains(t, res.Content, "TOPSECRET-SWAP", "a hidden file replaced under its name was readable to the server")

	// One a write tool makes (the rules that hide it may name only
	// read_file): the same.
	res = llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "other/.env", "content": "TOPSECRET-WRITTEN"}})
	require.False(t, res.IsError, res.Content)
	res = llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "a.fake", "content": "READ open.txt\nREAD other/.env\n"}})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "read: visible")
	assert.NotContains(t, res.Content, "TOPSECRET-WRITTEN", "a file a write tool made after the server started was readable to it")
}

// TestGoplsNeverSeesExcludedFiles: with secret/** excluded, gopls cannot
// load the package (its importer reports it missing) and finds none of its
// symbols; without the exclusion (the control, first) it does both.
func TestGoplsNeverSeesExcludedFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("real language servers: not in -short")
	}
	t.Parallel() // a real server: see "Real servers" in language_servers_test.go
	needServerSandbox(t)
	server := goplsServer(t)
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.22\n",
		"secret/s.go": "package secret\n\n// TopSecretFunc is hidden.\nfunc TopSecretFunc() int { return 42 }\n",
		"b/b.go":      "package b\n\nimport \"example.com/m/secret\"\n\nvar X = secret.TopSecretFunc()\n",
	})
	c, err := New(dir, WithLanguageServers(server), WithLanguageServerLimits(LanguageServerLimits{Settle: 90 * time.Second, Quiet: 500 * time.Millisecond}))
	require.NoError(t, err)
	defer c.Close()
	edit := func(ctx context.Context, from, to string) string {
		res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "edit_file", Arguments: map[string]any{"path": "b/b.go", "oldText": from, "newText": to}})
		require.False(t, res.IsError, res.Content)
		return res.Content
	}
	symbols := func(ctx context.Context) string {
		res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "symbols", Arguments: map[string]any{"path": "b/b.go", "query": "TopSecretFunc"}})
		require.False(t, res.IsError, res.Content)
		return res.Content
	}
	out := edit(context.Background(), "var X =", "var X int =")
	assert.Contains(t, out, "reports no errors or warnings in b/b.go", "the control")
	assert.Contains(t, symbols(context.Background()), "TopSecretFunc", "the control")

	ctx := excluding("secret/**")
	out = edit(ctx, "var X int =", "var X =")
	assert.Contains(t, out, "b/b.go:3:8: error", "gopls still loads the excluded package: %s", out)
	t.Logf("with secret/** excluded: %s", out)
	assert.NotContains(t, out, "TopSecret is hidden")
	syms := symbols(ctx)
	assert.NotContains(t, syms, "secret/s.go")
	// Past the client's filter: the server itself has no such symbol.
	all, err := c.lsp.WorkspaceSymbols(ctx, dir+"/b/b.go", "package b\n\nimport \"example.com/m/secret\"\n\nvar X = secret.TopSecretFunc()\n", "TopSecretFunc")
	require.NoError(t, err)
	for _, s := range all {
		assert.NotContains(t, s.Location.URI, "/secret/", "gopls indexed the excluded file")
	}
}

// TestServerMemoryLimitInSandbox: MemoryBytes reaches the server process
// inside the sandbox: where a memory cgroup can be made, the server runs
// in one of its own whose limit is MemoryBytes, as its own
// /proc/self/cgroup shows; else (one line logged) the shell that execs it
// sets RLIMIT_AS, as its /proc/self/limits shows.
func TestServerMemoryLimitInSandbox(t *testing.T) {
	needServerSandbox(t)
	const limit = 3 << 30
	var logs bytes.Buffer
	c := newTools(t, WithLanguageServers(fakeServer(t, "ok")), WithLanguageServerLimits(LanguageServerLimits{Settle: 20 * time.Second, MemoryBytes: limit}),
		WithLanguageServerLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	res := execute(c, "write_file", map[string]any{"path": "a.fake", "content": "READ /proc/self/limits address\nREAD /proc/self/cgroup\n"})
	require.False(t, res.IsError, res.Content)
	if strings.Contains(logs.String(), "no memory cgroup") {
		assert.Regexp(t, `read: Max address space +3221225472 +3221225472 +bytes`, res.Content)
		return
	}
	assert.Regexp(t, `read: Max address space +unlimited`, res.Content)
	// Inside, the sandbox's cgroup namespace shows its cgroup as "/": look
	// from outside, at the launcher and every process below it.
	st := c.lsp.Stats()
	require.Len(t, st, 1)
	groups := map[string]bool{}
	queue := []int{st[0].PID}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		require.NoError(t, err)
		m := regexp.MustCompile(`(?m)^(?:\d+:memory|0:):(/.*)$`).FindStringSubmatch(string(data))
		require.NotNil(t, m, "%s", data)
		groups[m[1]] = true
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, task := range tasks {
			kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
			for _, k := range strings.Fields(string(kids)) {
				n, err := strconv.Atoi(k)
				require.NoError(t, err)
				queue = append(queue, n)
			}
		}
	}
	require.Len(t, groups, 1, "the server's processes are not in one cgroup: %v", groups)
	var group string
	for g := range groups {
		group = g
	}
	require.Contains(t, group, "llmtoolkit-lsp-", "the server is in no memory cgroup of its own")
	var limitFile string
	for _, f := range []string{"/sys/fs/cgroup/memory" + group + "/memory.limit_in_bytes", "/sys/fs/cgroup" + group + "/memory.max", "/sys/fs/cgroup/unified" + group + "/memory.max"} {
		if _, err := os.Stat(f); err == nil {
			limitFile = f
			break
		}
	}
	if limitFile == "" {
		t.Skipf("the cgroup %s is not at a usual mount", group)
	}
	v, err := os.ReadFile(limitFile)
	require.NoError(t, err)
	assert.Equal(t, "3221225472", strings.TrimSpace(string(v)))
}

// TestServersNotStartedUnconfinedUnlessAllowed: where no sandbox backend
// runs (forced here), no server starts unless the host opts in with
// WithUnconfinedLanguageServers: the edits still succeed, their answers
// saying why they have no diagnostics, and one line is logged, once; with the option the server
// runs, directly, and reports.
func TestServersNotStartedUnconfinedUnlessAllowed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []Option
		reports bool
	}{
		{name: "refused by default"},
		{name: "allowed by the host", opts: []Option{WithUnconfinedLanguageServers()}, reports: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			opts := append([]Option{WithLanguageServers(fakeServer(t, "ok")),
				WithLanguageServerLimits(LanguageServerLimits{Settle: 20 * time.Second}),
				WithLanguageServerLogger(slog.New(slog.NewTextHandler(&logs, nil)))}, tc.opts...)
			c := newTools(t, opts...)
			c.srvSbx.backend, c.srvSbx.why = nil, "forced by the test" // as on a machine without one
			for i, content := range []string{"BAD\n", "BAD\nBAD\n"} {
				res := execute(c, "write_file", map[string]any{"path": "a.fake", "content": content})
				require.False(t, res.IsError, "call %d: %s", i, res.Content)
				if tc.reports {
					assert.Contains(t, res.Content, "fake reports", "call %d", i)
				} else {
					assert.Equal(t, fmt.Sprintf("Wrote %d bytes to a.fake\n\nNo diagnostics for a.fake: start fake: %v.", len(content), errNoServerSandbox), res.Content, "call %d", i)
				}
			}
			const line = "language servers are not started: no sandbox runs here"
			if tc.reports {
				assert.NotContains(t, logs.String(), line)
			} else {
				assert.Equal(t, 1, strings.Count(logs.String(), line), logs.String())
				assert.Equal(t, 1, strings.Count(logs.String(), "\n"), "one line: %s", logs.String())
			}
		})
	}
}

// TestServersNeverSeeNewFilesInIgnoredFolders: a file a deny rule hides,
// made after the server started in a folder .gitignore ignores (which
// bash's and the jobs' watch leave out) by bash, by a background job
// still running, or by one that ended, is hidden before the server is
// told anything again: the next call that reaches it finds it restarted
// with a view that covers the file.
func TestServersNeverSeeNewFilesInIgnoredFolders(t *testing.T) {
	needServerSandbox(t)
	for _, tc := range []struct {
		name, command string
		background    bool
	}{
		{name: "bash", command: "mkdir -p build/deep && echo TOPSECRET-NEW > build/deep/a.key"},
		{name: "a running job", command: "mkdir -p build/deep && echo TOPSECRET-NEW > build/deep/a.key && sleep 30", background: true},
		{name: "an ended job", command: "mkdir -p build/deep && echo TOPSECRET-NEW > build/deep/a.key", background: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTools(t, WithLanguageServers(fakeServer(t, "ok")), WithBackgroundJobs(),
				WithLanguageServerLimits(LanguageServerLimits{Settle: 20 * time.Second}))
			writeTestFiles(t, c.Root(), map[string]string{".gitignore": "build/\n", "open.txt": "visible"})
			ctx := excluding("**/*.key")
			probe := func(i int) string {
				res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "a.fake",
					"content": "READ open.txt\nREAD build/deep/a.key\n" + strings.Repeat("\n", i)}})
				require.False(t, res.IsError, res.Content)
				assert.Contains(t, res.Content, "read: visible")
				return res.Content
			}
			assert.Contains(t, probe(0), "cannot read", "before: no such file")
			res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": tc.command, "run_in_background": tc.background}})
			require.False(t, res.IsError, res.Content)
			require.Eventually(t, func() bool {
				_, err := os.Stat(c.Root() + "/build/deep/a.key")
				return err == nil
			}, 10*time.Second, 10*time.Millisecond)
			if tc.name == "an ended job" {
				time.Sleep(500 * time.Millisecond) // its end's scan may have run
			}
			out := probe(1)
			assert.NotContains(t, out, "TOPSECRET-NEW", "a new file in an ignored folder was readable to the server")
			assert.Contains(t, out, "cannot read")
		})
	}
}

// TestNewReadChecksRestartOnlyWhenTheyHideMore: a permission layer whose
// read check reaches the servers for the first time (a sub-agent's guard)
// restarts them only when it refuses a path their views do not cover
// already: a cold start costs seconds.
func TestNewReadChecksRestartOnlyWhenTheyHideMore(t *testing.T) {
	needServerSandbox(t)
	var logs bytes.Buffer
	c := newTools(t, WithLanguageServers(fakeServer(t, "ok")), WithLanguageServerLimits(LanguageServerLimits{Settle: 20 * time.Second}),
		WithLanguageServerLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	writeTestFiles(t, c.Root(), map[string]string{"secret/x.txt": "TOPSECRET-X", "other.txt": "TOPSECRET-OTHER", "open.txt": "visible"})
	refusing := func(ctx context.Context, key string, refused func(string) bool) context.Context {
		return readcheck.With(ctx, readcheck.Check{Key: key, Check: func(_ context.Context, p string) error {
			if refused(p) {
				return errors.New("refused")
			}
			return nil
		}})
	}
	ctx1 := refusing(context.Background(), "parent", func(p string) bool { return strings.HasPrefix(p, "secret") })
	ctx2 := refusing(ctx1, "sub-agent", func(p string) bool { return p == "secret/x.txt" })
	ctx3 := refusing(ctx2, "another", func(p string) bool { return p == "other.txt" })
	for i, tc := range []struct {
		ctx    context.Context
		starts int
		other  string
	}{
		{ctx1, 1, "read: TOPSECRET-OTHER"},
		{ctx2, 1, "read: TOPSECRET-OTHER"}, // hides nothing more: no restart
		{ctx3, 2, "cannot read"},
	} {
		res := llmtoolkit.Execute(tc.ctx, c, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "a.fake",
			"content": "READ open.txt\nREAD secret/x.txt\nREAD other.txt\n" + strings.Repeat("\n", i)}})
		require.False(t, res.IsError, res.Content)
		assert.Contains(t, res.Content, "read: visible", "call %d", i)
		assert.NotContains(t, res.Content, "TOPSECRET-X", "call %d", i)
		assert.Contains(t, res.Content, tc.other, "call %d", i)
		assert.Equal(t, tc.starts, strings.Count(logs.String(), "lsp: server started"), "call %d", i)
	}
}

// TestHostReadCheckHidesFromServers: a host with a permission layer of
// its own (no agent guard, no globs) hands its decision with
// llmtoolkit.WithReadCheck: the server cannot open the files it refuses,
// present at the start or made after (in a folder .gitignore ignores),
// and opens the others; without it (the control, first) it opens them
// all.
func TestHostReadCheckHidesFromServers(t *testing.T) {
	needServerSandbox(t)
	c := newTools(t, WithLanguageServers(fakeServer(t, "ok")), WithLanguageServerLimits(LanguageServerLimits{Settle: 20 * time.Second}))
	writeTestFiles(t, c.Root(), map[string]string{".gitignore": "out/\n", "private/a.txt": "TOPSECRET-A", "open.txt": "visible"})
	hostLayer := llmtoolkit.WithReadCheck(context.Background(), "host", func(_ context.Context, p string) error {
		if p == "private" || strings.HasPrefix(p, "private/") || strings.HasSuffix(p, ".secret") {
			return errors.New("the host refuses it")
		}
		return nil
	})
	probe := func(ctx context.Context, i int) string {
		res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "a.fake",
			"content": "READ open.txt\nREAD private/a.txt\nREAD out/b.secret\n" + strings.Repeat("\n", i)}})
		require.False(t, res.IsError, res.Content)
		assert.Contains(t, res.Content, "read: visible")
		return res.Content
	}
	assert.Contains(t, probe(context.Background(), 0), "read: TOPSECRET-A", "the control")
	out := probe(hostLayer, 1)
	assert.NotContains(t, out, "TOPSECRET-A", "a file the host's read check refuses was readable to the server")
	res := llmtoolkit.Execute(hostLayer, c, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "mkdir -p out && echo TOPSECRET-B > out/b.secret"}})
	require.False(t, res.IsError, res.Content)
	out = probe(hostLayer, 2)
	assert.NotContains(t, out, "TOPSECRET", "a new file the host's read check refuses was readable to the server")
	assert.Equal(t, 2, strings.Count(out, "cannot read"), out)
}
