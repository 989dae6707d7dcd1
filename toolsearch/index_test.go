package toolsearch

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// TestTerms: names split at underscores and camelCase humps (the run
// kept whole too), stop words dropped, inflections meet their Snowball
// stem.
func TestTerms(t *testing.T) {
	for text, want := range map[string][]string{
		"slack_post_message":     {"slack", "post", "messag", "slackpostmessag"},
		"readMultipleFiles":      {"read", "multipl", "file", "readmultiplefil"},
		"HTTPServer":             {"http", "server", "httpserver"},
		"Creates the new issues": {"creat", "new", "issu"},
		"created, creating":      {"creat", "creat"},
		"listing listed lists":   {"list", "list", "list"},
		"stopping":               {"stop"},
		"the a of":               nil,
		"Größe ändern":           {"größe", "ändern"},
		"":                       nil,
	} {
		assert.Equal(t, want, terms(text), text)
	}
}

// TestSnowballStems: words stem as the Snowball English (Porter2)
// algorithm's own vocabulary and output lists have them
// (snowballstem.org/algorithms/english), so that the inflections of a
// need meet a tool's; words with digits are kept as they are.
func TestSnowballStems(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"consign", "consign"}, {"consigned", "consign"}, {"consigning", "consign"},
		{"consignment", "consign"}, {"generously", "generous"}, {"knightly", "knight"},
		{"running", "run"}, {"ran", "run"}, {"refunds", "refund"}, {"refunded", "refund"},
		{"deployment", "deploy"}, {"deploying", "deploy"}, {"subscriptions", "subscript"},
		{"ec2", "ec2"}, {"k8s", "k8s"},
	} {
		assert.Equal(t, c.want, (*stemmer)(nil).stem(c.in), c.in)
	}
	s := newStemmer()
	assert.Equal(t, "list", s.stem("listing"))
	assert.Equal(t, "list", s.stem("listing"), "the cached stem")
}

// TestSearchRanksNameAboveDescription: a query word in a tool's name
// weighs more than the same word in another's description, in both
// modes; ties keep list order; limit bounds the answer; a cancelled
// context stops the search.
func TestSearchRanksNameAboveDescription(t *testing.T) {
	tools := []llmtoolkit.Tool{
		llmtoolkit.MustTool("notes_add", "Adds a note; can also archive it.", nil),
		llmtoolkit.MustTool("archive_note", "Moves a note away.", nil),
		llmtoolkit.MustTool("other", "Nothing to see.", map[string]any{"type": "object", "properties": map[string]any{
			"archive": map[string]any{"type": "boolean", "description": "unrelated"}}}),
	}
	ix := NewIndex(tools)
	for _, mode := range []Mode{BM25, Regex} {
		got, err := ix.Search(context.Background(), "archive", mode, 5)
		require.NoError(t, err)
		require.Len(t, got, 3, mode)
		assert.Equal(t, "archive_note", got[0].Tool.Name, mode)
		one, err := ix.Search(context.Background(), "archive", mode, 1)
		require.NoError(t, err)
		assert.Len(t, one, 1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ix.Search(ctx, "archive", BM25, 5)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = ix.Search(ctx, "archive", Regex, 5)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = ix.Search(context.Background(), "  ", BM25, 5)
	assert.ErrorIs(t, err, ErrBadQuery)
}

// TestServerField: the server's name (Metadata[MetadataServer]) is a
// field of its own: a need that names the server finds its tool though
// the tool's name and description do not say it, and a regex names the
// field it matched in.
func TestServerField(t *testing.T) {
	tool := func(name, desc, server string) llmtoolkit.Tool {
		tl := llmtoolkit.MustTool(name, desc, nil)
		if server != "" {
			tl.Metadata = map[string]any{MetadataServer: server}
		}
		return tl
	}
	ix := NewIndex([]llmtoolkit.Tool{
		tool("create_issue", "Create a new issue in a repository.", "gitlab"),
		tool("create_issue2", "Create a new issue in a repository.", "github"),
		tool("create_issue3", "Create a new issue in a repository.", ""),
	})
	got, err := ix.Search(context.Background(), "open an issue on github", BM25, 3)
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, "create_issue2", got[0].Tool.Name)
	got, err = ix.Search(context.Background(), "^github$", Regex, 3)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "create_issue2", got[0].Tool.Name)
	assert.Equal(t, []string{FieldServer}, got[0].Fields)
}

// FuzzSearch: any query, in either mode, answers at most limit tools or
// an error, never a panic.
func FuzzSearch(f *testing.F) {
	ix := NewIndex([]llmtoolkit.Tool{
		llmtoolkit.MustTool("slack_post_message", "Post a message to a Slack channel.", nil),
		llmtoolkit.MustTool("getUserProfile", "Get the profile of a user, with ÄÖÜ and ſ.", map[string]any{"type": "object", "properties": map[string]any{
			"user_id": map[string]any{"type": "string", "description": "The user."}}}),
	})
	for _, q := range []string{"slack", "(a|b)*", "\\", "ſ", "[[:alpha:]]+", "x{1000}"} {
		f.Add(q, 3)
	}
	f.Fuzz(func(t *testing.T, query string, limit int) {
		limit %= 30
		for _, mode := range []Mode{BM25, Regex} {
			got, err := ix.Search(context.Background(), query, mode, limit)
			if err == nil {
				assert.LessOrEqual(t, len(got), max(limit, 0))
			}
		}
	})
}

// TestFingerprintSeesServer: a Resolver builds its index again when a
// tool's server changes, not only its name, description or schema.
func TestFingerprintSeesServer(t *testing.T) {
	a := llmtoolkit.MustTool("create_issue", "Create an issue.", nil)
	b := a
	b.Metadata = map[string]any{MetadataServer: "github"}
	assert.NotEqual(t, fingerprint([]llmtoolkit.Tool{a}), fingerprint([]llmtoolkit.Tool{b}))
	assert.Equal(t, fingerprint([]llmtoolkit.Tool{b}), fingerprint([]llmtoolkit.Tool{b}))
}

// TestEnumValuesAreSearched: a property's string enum values (of an
// array's items too) are words of the tool's argument descriptions, so a
// need worded as one of them finds the tool; values that are not strings
// are skipped, and a regex meets them in the argument descriptions.
func TestEnumValuesAreSearched(t *testing.T) {
	power := llmtoolkit.MustTool("server_action", "Act on a server.", map[string]any{"type": "object", "properties": map[string]any{
		"action": map[string]any{"type": "string", "description": "What to do", "enum": []any{"poweron", "poweroff", "reboot"}},
		"level":  map[string]any{"type": "integer", "enum": []any{1, 2, 3}},
	}})
	labels := llmtoolkit.MustTool("label_print", "Print a label.", map[string]any{"type": "object", "properties": map[string]any{
		"formats": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"PDF", "ZPLII"}}},
	}})
	other := llmtoolkit.MustTool("server_list", "List servers and what they do.", nil)
	ix := NewIndex([]llmtoolkit.Tool{other, power, labels})
	for _, c := range []struct{ query, want string }{
		{"reboot the server", "server_action"},
		{"zplii", "label_print"},
	} {
		got, err := ix.Search(context.Background(), c.query, BM25, 1)
		require.NoError(t, err)
		require.Len(t, got, 1, c.query)
		assert.Equal(t, c.want, got[0].Tool.Name, c.query)
	}
	assert.Equal(t, []string{"What to do", "poweron poweroff reboot"}, ix.docs[1].descs, "numbers are not words of the enum")
	got, err := ix.Search(context.Background(), "^poweron", Regex, 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "server_action", got[0].Tool.Name)
}

// TestSearchScratchReused: a search's per-tool state, kept for the next
// one, is zero again when the next begins, also after a cancelled search,
// and concurrent searches do not share it.
func TestSearchScratchReused(t *testing.T) {
	ix := NewIndex([]llmtoolkit.Tool{
		llmtoolkit.MustTool("github_create_issue", "Create an issue in a GitHub repository.", nil),
		llmtoolkit.MustTool("slack_post_message", "Post a message to a Slack channel.", nil),
		llmtoolkit.MustTool("jira_search", "Search Jira issues with JQL.", nil),
	})
	first, err := ix.Search(context.Background(), "open a bug on github", BM25, 3)
	require.NoError(t, err)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = ix.Search(cancelled, "post in slack about the jira issue", BM25, 3)
	require.Error(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				_, _ = ix.Search(context.Background(), "post in slack about the jira issue", BM25, 3)
				again, err := ix.Search(context.Background(), "open a bug on github", BM25, 3)
				assert.NoError(t, err)
				assert.Equal(t, first, again)
			}
		}()
	}
	wg.Wait()
}
