package toolsearch

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// TestTerms: tools and queries are split the same way, the unsplit run
// kept too.
func TestTermsJoined(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"PostgreSQL", []string{"postgr", "sql", "postgresql"}},
		{"postgresql", []string{"postgresql"}},
		{"kubectl_scale", []string{"kubectl", "scale", "kubectlscal"}},
		{"getPRList2", []string{"get", "pr", "list", "getprlist2"}},
		{"pull-requests", []string{"pull", "request", "pullrequest"}},
		{"the customer's files", []string{"custom", "file"}},
		{"EC2 s3", []string{"ec", "ec2", "s3"}},
		{"issue 512 at 3", []string{"issu"}},
	} {
		assert.Equal(t, c.want, terms(c.text), c.text)
	}
}

// TestEquivalents: a word of a group meets the others, one- and
// two-word members alike, and a host's group extends the table.
func TestEquivalents(t *testing.T) {
	tools := []llmtoolkit.Tool{
		llmtoolkit.MustTool("pay_refund", "Returns a charge to the buyer.", nil),
		llmtoolkit.MustTool("vcs_list_prs", "Lists the pull requests of a repository.", nil),
		llmtoolkit.MustTool("crm_sync", "Synchronizes the accounts.", nil),
		llmtoolkit.MustTool("weather_now", "The weather at a place.", nil),
	}
	ctx := context.Background()
	top := func(ix *Index, q string) string {
		got, err := ix.Search(ctx, q, BM25, 1)
		require.NoError(t, err)
		if len(got) == 0 {
			return ""
		}
		return got[0].Tool.Name
	}
	ix := NewIndex(tools)
	assert.Equal(t, "pay_refund", top(ix, "give the money back"))
	assert.Equal(t, "vcs_list_prs", top(ix, "open merge requests"))
	assert.Equal(t, "", top(ix, "reconcile the ledgers"))
	ext := NewIndexWith(tools, WithEquivalents([]string{"sync", "reconcile"}))
	assert.Equal(t, "crm_sync", top(ext, "reconcile the ledgers"))
}

// TestResolverEquivalentWords: a Resolver's search uses the host's
// equivalent words.
func TestResolverEquivalentWords(t *testing.T) {
	fake := &lt.Fake{}
	ok := func(_ context.Context, c llmtoolkit.Call) (string, error) { return "", nil }
	for _, tool := range []llmtoolkit.Tool{
		llmtoolkit.MustTool("crm_sync", "Synchronizes the accounts.", nil),
		llmtoolkit.MustTool("weather_now", "The weather at a place.", nil),
	} {
		tool.Deferred = true
		fake.Add(tool, ok)
	}
	call := llmtoolkit.Call{Name: SearchToolName, Arguments: map[string]any{"query": "reconcile the ledgers"}}
	res := llmtoolkit.Execute(t.Context(), New(fake), call)
	assert.Contains(t, res.Content, "No tool matches")
	res = llmtoolkit.Execute(t.Context(), New(fake, WithEquivalentWords([]string{"sync", "reconcile"}), WithEquivalentWords([]string{"ledger", "account"})), call)
	assert.Contains(t, res.Content, "- crm_sync:")
}

// TestAbbreviations: a query's word that no tool has meets the tools'
// words it begins ("ack" acknowledge, "repo" repository); a word some
// tool has is not stretched ("post" does not meet PostgreSQL).
func TestAbbreviations(t *testing.T) {
	ix := NewIndex([]llmtoolkit.Tool{
		llmtoolkit.MustTool("pd_acknowledge", "Acknowledge an incident.", nil),
		llmtoolkit.MustTool("gh_fork", "Fork a repository.", nil),
		llmtoolkit.MustTool("pg_query", "Run SQL on PostgreSQL.", nil),
		llmtoolkit.MustTool("chat_post", "Post a message.", nil),
	})
	for _, c := range []struct{ query, want string }{
		{"ack it", "pd_acknowledge"},
		{"fork the repo", "gh_fork"},
	} {
		got, err := ix.Search(context.Background(), c.query, BM25, 5)
		require.NoError(t, err)
		require.NotEmpty(t, got, c.query)
		assert.Equal(t, c.want, got[0].Tool.Name, c.query)
	}
	got, err := ix.Search(context.Background(), "post", BM25, 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "chat_post", got[0].Tool.Name)
}
