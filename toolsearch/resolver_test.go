package toolsearch_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

const (
	tenant = "0190a6f2-3c5e-7d4a-8b1c-2d3e4f5a6b7c"
	conv   = "0190a6f2-3c5e-7d4a-8b1c-2d3e4f5a6b7d"
)

func obj(props map[string]any, required ...any) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// quiet keeps the loop's log out of the test output.
var quiet = slog.New(slog.DiscardHandler)

var str = map[string]any{"type": "string"}

// workspace has one tool offered at once (read_file) and three deferred
// ones: a Slack poster, a GitHub issue opener and a login with a secret.
func workspace() *lt.Fake {
	ok := func(_ context.Context, c llmtoolkit.Call) (string, error) { return c.Name + " ran", nil }
	read := llmtoolkit.MustTool("read_file", "Reads a file.", obj(map[string]any{"path": str}, "path"))
	post := llmtoolkit.MustTool("slack_post_message", "Post a message to a Slack channel.", obj(map[string]any{"channel": str, "text": str}, "channel", "text"))
	post.Deferred = true
	issue := llmtoolkit.MustTool("github_create_issue", "Create an issue in a GitHub repository.", obj(map[string]any{"repo": str, "title": str}, "repo", "title"))
	issue.Deferred = true
	login := llmtoolkit.MustTool("vault_login", "Log in to the secrets vault.", obj(map[string]any{"user": str, "token": str}, "user", "token"))
	login.Deferred = true
	login.SensitiveFields = []string{"token"}
	return (&lt.Fake{}).Add(read, ok).Add(post, ok).Add(issue, ok).Add(login, ok)
}

func names(tools []llmtoolkit.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

// TestOfferFoundToolsJoinFromTheNextTurn: the model is offered the tools
// not deferred and tool_search; what a search finds is offered from the
// next turn, appended after what was offered before, and runs.
func TestOfferFoundToolsJoinFromTheNextTurn(t *testing.T) {
	fake := workspace()
	s := toolsearch.New(fake)
	model := lt.NewScriptedModel(t,
		lt.CallTools(lt.Call("tool_search", map[string]any{"query": "post a message in Slack", "limit": 1})),
		lt.CallTools(lt.Call("slack_post_message", map[string]any{"channel": "C1", "text": "hi"})),
		lt.Reply("done"),
	)
	_, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("tell the team")}, model.Send, agentloop.Options{Resolver: s, Logger: quiet})
	require.NoError(t, err)
	reqs := model.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"read_file", "tool_search"}, names(reqs[0].Tools))
	assert.Equal(t, []string{"read_file", "tool_search", "slack_post_message"}, names(reqs[1].Tools))
	assert.Equal(t, names(reqs[1].Tools), names(reqs[2].Tools))
	assert.Len(t, fake.CallsTo("slack_post_message"), 1)
	assert.Equal(t, []string{"slack_post_message"}, s.Found())
	assert.Contains(t, reqs[1].Messages[len(reqs[1].Messages)-1].Content, "slack_post_message")
}

// TestUndiscoveredToolsCannotBeCalled: a deferred tool the model has not
// found is answered as an unknown tool and never runs, unless the host
// lets such calls through.
func TestUndiscoveredToolsCannotBeCalled(t *testing.T) {
	for _, proxy := range []bool{false, true} {
		fake := workspace()
		var opts []toolsearch.Option
		if proxy {
			opts = append(opts, toolsearch.WithProxy())
		}
		s := toolsearch.New(fake, opts...)
		direct := llmtoolkit.Execute(t.Context(), s, llmtoolkit.Call{Name: "github_create_issue", Arguments: map[string]any{"repo": "a/b", "title": "x"}})
		assert.True(t, direct.IsError)
		assert.ErrorIs(t, direct.Err, llmtoolkit.ErrUnknownTool)
		assert.ErrorIs(t, direct.Err, toolsearch.ErrUndiscovered)
		assert.Contains(t, direct.Content, "tool_search")
		if proxy {
			via := llmtoolkit.Execute(t.Context(), s, llmtoolkit.Call{Name: "call_tool", Arguments: map[string]any{"name": "github_create_issue", "arguments": map[string]any{"repo": "a/b", "title": "x"}}})
			assert.True(t, via.IsError)
			assert.ErrorIs(t, via.Err, llmtoolkit.ErrUnknownTool)
		}
		assert.Empty(t, fake.CallsTo("github_create_issue"))
		_, listed := s.LookupTool("github_create_issue")
		assert.False(t, listed)

		open := toolsearch.New(fake, append(opts, toolsearch.WithUndiscoveredCalls())...)
		res := llmtoolkit.Execute(t.Context(), open, llmtoolkit.Call{Name: "github_create_issue", Arguments: map[string]any{"repo": "a/b", "title": "x"}})
		assert.False(t, res.IsError, res.Content)
		assert.Len(t, fake.CallsTo("github_create_issue"), 1)
	}
}

// TestProxyListIsFixed: in proxy mode the listed tools never change;
// tool_search answers the found tools' schemas; call_tool runs one,
// validated against its own schema.
func TestProxyListIsFixed(t *testing.T) {
	fake := workspace()
	s := toolsearch.New(fake, toolsearch.WithProxy(), toolsearch.WithMode(toolsearch.Regex))
	before := names(s.Tools())
	assert.Equal(t, []string{"read_file", "tool_search", "call_tool"}, before)

	found := llmtoolkit.Execute(t.Context(), s, llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": "github.*issue"}})
	require.False(t, found.IsError, found.Content)
	assert.Contains(t, found.Content, `"name":"github_create_issue"`)
	assert.Contains(t, found.Content, `"required":["repo","title"]`)
	assert.Equal(t, before, names(s.Tools()))

	bad := llmtoolkit.Execute(t.Context(), s, llmtoolkit.Call{Name: "call_tool", Arguments: map[string]any{"name": "github_create_issue", "arguments": map[string]any{"repo": "a/b"}}})
	assert.True(t, bad.IsError)
	assert.ErrorIs(t, bad.Err, llmtoolkit.ErrInvalidArguments)
	assert.Contains(t, bad.Content, "title")
	assert.Empty(t, fake.CallsTo("github_create_issue"))

	good := llmtoolkit.Execute(t.Context(), s, llmtoolkit.Call{ID: "c1", Name: "call_tool", Arguments: map[string]any{"name": "github_create_issue", "arguments": map[string]any{"repo": "a/b", "title": "x"}}})
	require.False(t, good.IsError, good.Content)
	assert.Equal(t, "github_create_issue ran", good.Content)
	calls := fake.CallsTo("github_create_issue")
	require.Len(t, calls, 1)
	assert.Equal(t, map[string]any{"repo": "a/b", "title": "x"}, calls[0].Arguments)

	self := llmtoolkit.Execute(t.Context(), s, llmtoolkit.Call{Name: "call_tool", Arguments: map[string]any{"name": "call_tool", "arguments": map[string]any{}}})
	assert.True(t, self.IsError)

	// Resolve called without Execute runs the call too.
	out, err := s.Resolve(t.Context(), llmtoolkit.Call{Name: "call_tool", Arguments: map[string]any{"name": "github_create_issue", "arguments": map[string]any{"repo": "c/d", "title": "y"}}})
	require.NoError(t, err)
	assert.Equal(t, "github_create_issue ran", out)
}

// TestSearchErrors: an empty query and a regex that does not compile are
// answered as errors the model reads.
func TestSearchErrors(t *testing.T) {
	s := toolsearch.New(workspace(), toolsearch.WithMode(toolsearch.Regex))
	for _, q := range []string{"", "(unclosed", strings.Repeat("a", toolsearch.MaxPatternBytes+1)} {
		res := llmtoolkit.Execute(t.Context(), s, llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": q}})
		assert.True(t, res.IsError, q)
	}
	res := llmtoolkit.Execute(t.Context(), s, llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": "nothing-like-this"}})
	assert.False(t, res.IsError)
	assert.Contains(t, res.Content, "No tool matches")
	assert.Empty(t, s.Found())
}

// openDB is a migrated SQLite trace database in a temporary folder.
func openDB(t *testing.T) *gorm.DB {
	t.Helper()
	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	return db
}

// TestProxyGuardAndTraceSeeTheRealCall: with the permission guard and
// the trace recorder inside the proxy or around it, and a Session around
// all, a call_tool call is
// checked and recorded as the call it makes: a deny rule on the real tool
// holds through call_tool, the recorded row names the real tool with its
// arguments, and a sensitive argument of a proxied tool is stored nowhere.
func TestProxyGuardAndTraceSeeTheRealCall(t *testing.T) {
	stacks := map[string]func(fake llmtoolkit.Resolver, p *agent.Permissions, db *gorm.DB) llmtoolkit.Resolver{
		"proxy outside": func(fake llmtoolkit.Resolver, p *agent.Permissions, db *gorm.DB) llmtoolkit.Resolver {
			return toolsearch.New(p.Guard(trace.Record(fake, db, trace.WithDefaultConversation(tenant, conv))), toolsearch.WithProxy())
		},
		"proxy inside": func(fake llmtoolkit.Resolver, p *agent.Permissions, db *gorm.DB) llmtoolkit.Resolver {
			return trace.Record(p.Guard(toolsearch.New(fake, toolsearch.WithProxy())), db, trace.WithDefaultConversation(tenant, conv))
		},
		// A Session declaring the proxy's tools, its map attributing the
		// rows: the real call is a step of the declared call_tool.
		"session around": func(fake llmtoolkit.Resolver, p *agent.Permissions, db *gorm.DB) llmtoolkit.Resolver {
			_, session := llmtoolkit.PrepareSession(trace.Record(p.Guard(toolsearch.New(fake, toolsearch.WithProxy())), db),
				[]string{"read_file", "tool_search", "call_tool"}, map[string]any{"tenant_id": tenant, "conversation_id": conv})
			return session
		},
	}
	for name, build := range stacks {
		t.Run(name, func(t *testing.T) {
			fake := workspace()
			p, err := agent.New(agent.Config{Deny: []agent.Rule{{Tool: "slack_post_message"}}})
			require.NoError(t, err)
			db := openDB(t)
			r := build(fake, p, db)
			model := lt.NewScriptedModel(t,
				lt.CallTools(lt.Call("tool_search", map[string]any{"query": "slack github vault", "limit": 5})),
				lt.CallTools(
					lt.Call("call_tool", map[string]any{"name": "slack_post_message", "arguments": map[string]any{"channel": "C1", "text": "hi"}}),
					lt.Call("call_tool", map[string]any{"name": "github_create_issue", "arguments": map[string]any{"repo": "a/b", "title": "bug"}}),
					lt.Call("call_tool", map[string]any{"name": "vault_login", "arguments": map[string]any{"user": "ann", "token": "s3cr3t-tok"}}),
				),
				lt.Reply("done"),
			)
			var results []llmtoolkit.Result
			onIt := func(it agentloop.Iteration) { results = append(results, it.Results...) }
			_, _, err = agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, model.Send, agentloop.Options{Resolver: r, MaxParallel: 1, OnIteration: onIt, Logger: quiet})
			require.NoError(t, err)
			reqs := model.Requests()
			for _, req := range reqs {
				assert.Equal(t, []string{"read_file", "tool_search", "call_tool"}, names(req.Tools))
			}

			assert.Empty(t, fake.CallsTo("slack_post_message"), "the deny rule holds through call_tool")
			assert.Len(t, fake.CallsTo("github_create_issue"), 1)
			assert.Len(t, fake.CallsTo("vault_login"), 1)
			var denied *llmtoolkit.Result
			for i := range results {
				if results[i].ToolCallID == "call_2_1" {
					denied = &results[i]
				}
			}
			require.NotNil(t, denied)
			assert.True(t, denied.IsError)
			assert.True(t, errors.Is(denied.Err, llmtoolkit.ErrDenied), "%v", denied.Err)

			rows, err := trace.List(t.Context(), db, trace.Filter{})
			require.NoError(t, err)
			byTool := map[string][]trace.Trace{}
			for _, row := range rows {
				byTool[row.ToolName] = append(byTool[row.ToolName], row)
				assert.NotContains(t, jsonOf(t, row.Arguments), "s3cr3t-tok", row.ToolName)
				assert.NotContains(t, jsonOf(t, row.Result), "s3cr3t-tok", row.ToolName)
			}
			require.Len(t, byTool["github_create_issue"], 1, "the real call is recorded under its own name")
			assert.JSONEq(t, `{"repo":"a/b","title":"bug"}`, jsonOf(t, byTool["github_create_issue"][0].Arguments))
			require.Len(t, byTool["vault_login"], 1)
			assert.Contains(t, jsonOf(t, byTool["vault_login"][0].Arguments), `"user":"ann"`)
			require.Len(t, byTool["slack_post_message"], 1, "the refused real call is recorded too")
			assert.Equal(t, trace.ResultError, byTool["slack_post_message"][0].ResultType)
		})
	}
}

// TestDeferredCrossesWrappers: the Deferred fact is on the definitions
// that Compose, Filter, ReadOnly, a Session, Indexed, the permission
// guard and the trace recorder list and look up.
func TestDeferredCrossesWrappers(t *testing.T) {
	fake := workspace()
	p, err := agent.New(agent.Config{})
	require.NoError(t, err)
	_, session := llmtoolkit.PrepareSession(fake, names(fake.Tools()), map[string]any{})
	wrappers := map[string]llmtoolkit.Resolver{
		"compose":  llmtoolkit.Compose(fake),
		"filter":   llmtoolkit.Filter(fake, func(llmtoolkit.Tool) bool { return true }),
		"readonly": llmtoolkit.ReadOnly(llmtoolkit.Compose(fake, llmtoolkit.Defer(readOnlyTool()))),
		"session":  session,
		"indexed":  llmtoolkit.Indexed(fake, fake.Tools()),
		"guard":    p.Guard(fake),
		"record":   trace.Record(fake, openDB(t), trace.WithDefaultConversation(tenant, conv)),
		"defer":    llmtoolkit.Defer(llmtoolkit.Compose(fake)),
	}
	for name, w := range wrappers {
		t.Run(name, func(t *testing.T) {
			listed := map[string]bool{}
			for _, tool := range w.Tools() {
				listed[tool.Name] = tool.Deferred
				found, ok := llmtoolkit.FindTool(w, tool.Name)
				require.True(t, ok)
				assert.Equal(t, tool.Deferred, found.Deferred, tool.Name)
			}
			switch name {
			case "readonly":
				assert.True(t, listed["peek"])
			case "defer":
				assert.True(t, listed["read_file"])
				assert.True(t, listed["slack_post_message"])
			default:
				assert.False(t, listed["read_file"])
				assert.True(t, listed["slack_post_message"])
				assert.True(t, listed["vault_login"])
			}
		})
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}

func readOnlyTool() llmtoolkit.Resolver {
	peek := llmtoolkit.MustTool("peek", "Peeks.", obj(map[string]any{}))
	peek.Annotations = &llmtoolkit.Annotations{ReadOnly: true}
	return (&lt.Fake{}).Add(peek, func(context.Context, llmtoolkit.Call) (string, error) { return "", nil })
}

// TestConcurrentSearches: the calls of one turn run in parallel; searches,
// listings and calls of found tools share the Resolver safely, and each
// tool found is listed once.
func TestConcurrentSearches(t *testing.T) {
	s := toolsearch.New(hostCatalog(t))
	queries := []string{"slack message", "github issue", "jira ticket", "postgres query", "slack message", "kubernetes scale"}
	var wg sync.WaitGroup
	for _, q := range queries {
		wg.Go(func() {
			res := llmtoolkit.Execute(t.Context(), s, llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": q, "limit": 3}})
			assert.False(t, res.IsError, res.Content)
			_ = s.Tools()
			for _, name := range s.Found() {
				llmtoolkit.FindTool(s, name)
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, tool := range s.Tools() {
		assert.False(t, seen[tool.Name], "listed twice: %s", tool.Name)
		seen[tool.Name] = true
	}
	assert.NotEmpty(t, s.Found())
}
