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
		{"EC2 s3", []string{"ec2", "s3"}},
		{"k8s at 3pm, 40k, the 14th", []string{"k8s", "3pm", "40k", "14th"}},
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
	assert.Equal(t, "", top(ix, "harmonize the journals"))
	ext := NewIndexWith(tools, WithEquivalents([]string{"sync", "harmonize"}))
	assert.Equal(t, "crm_sync", top(ext, "harmonize the journals"))
	// A member that is one word without its stop words, joined by a
	// hyphen too, is left out: "on-call" would be "call".
	ext = NewIndexWith(tools, WithEquivalents([]string{"weather", "on-call"}))
	assert.Equal(t, "", top(ext, "call"))
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
	call := llmtoolkit.Call{Name: SearchToolName, Arguments: map[string]any{"query": "harmonize the journals"}}
	res := llmtoolkit.Execute(t.Context(), New(fake), call)
	assert.Contains(t, res.Content, "No tool matches")
	res = llmtoolkit.Execute(t.Context(), New(fake, WithEquivalentWords([]string{"sync", "harmonize"}), WithEquivalentWords([]string{"journal", "account"})), call)
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

// topOf is the name of the first tool a BM25 search of q answers, "" for
// none.
func topOf(t *testing.T, ix *Index, q string) string {
	t.Helper()
	got, err := ix.Search(context.Background(), q, BM25, 5)
	require.NoError(t, err)
	if len(got) == 0 {
		return ""
	}
	return got[0].Tool.Name
}

// TestIrregularForms: irregular past forms and plurals meet their base
// form; a form with a second common meaning is left as it is.
func TestIrregularForms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"paid", "pay"}, {"sent", "send"}, {"wrote", "write"}, {"written", "write"},
		{"children", "child"}, {"built", "build"}, {"ran", "run"}, {"left", "left"},
	} {
		assert.Equal(t, c.want, (*stemmer)(nil).stem(c.in), c.in)
	}
	ix := NewIndex([]llmtoolkit.Tool{
		llmtoolkit.MustTool("qbo_record_payment", "Records that a customer pays an invoice.", nil),
		llmtoolkit.MustTool("qbo_list_logs", "Lists the audit logs.", nil),
	})
	assert.Equal(t, "qbo_record_payment", topOf(t, ix, "Acme paid"))
}

// TestPhrasalVerbs: a two-word member of a group means what the pair
// means, not what its words mean alone: "set up" is create (set alone is
// update), "call off" is cancel (call alone is nothing of the kind).
func TestPhrasalVerbs(t *testing.T) {
	ix := NewIndex([]llmtoolkit.Tool{
		llmtoolkit.MustTool("cal_update_event", "Changes an event: its time or title.", nil),
		llmtoolkit.MustTool("cal_create_event", "Creates a calendar event.", nil),
		llmtoolkit.MustTool("cal_cancel_booking", "Cancels a booking.", nil),
		llmtoolkit.MustTool("phone_call", "Places a phone call to a number.", nil),
	})
	assert.Equal(t, "cal_create_event", topOf(t, ix, "set up an event with Ana"))
	assert.Equal(t, "cal_update_event", topOf(t, ix, "set the event's title"))
	assert.Equal(t, "cal_cancel_booking", topOf(t, ix, "call off the 3pm booking"))
}

// TestSeparatedParticles: a phrasal verb's particle may follow the
// verb's object, two words at most ("turn the music down" is "turn
// down"), and then counts as the pair.
func TestSeparatedParticles(t *testing.T) {
	ix := NewIndex([]llmtoolkit.Tool{
		llmtoolkit.MustTool("player_turn_on", "Turn the player on.", nil),
		llmtoolkit.MustTool("player_set_volume", "Set the playback volume.", nil),
		llmtoolkit.MustTool("list_unsubscribe", "Unsubscribe a member from a mailing list.", nil),
		llmtoolkit.MustTool("list_members", "List the members of a mailing list.", nil),
	})
	assert.Equal(t, "player_set_volume", topOf(t, ix, "turn the player down"))
	assert.Equal(t, "list_unsubscribe", topOf(t, ix, "take bob off the mailing list"))
	var paired []int
	ix.equiv.sources(terms("turn the old red player down"), &paired)
	assert.Equal(t, []int{notPaired, notPaired, notPaired, notPaired, notPaired}, paired, "three words between: no pair")
}

// TestJoinedWords: two words of a query that a tool writes as one meet
// it ("web hook" webhook).
func TestJoinedWords(t *testing.T) {
	ix := NewIndex([]llmtoolkit.Tool{
		llmtoolkit.MustTool("page_fetch", "Fetches a web page.", nil),
		llmtoolkit.MustTool("fish_catch", "Catches a fish with a hook.", nil),
		llmtoolkit.MustTool("list_webhooks", "Lists the registered URLs.", nil),
	})
	assert.Equal(t, "list_webhooks", topOf(t, ix, "web hook"))
}

// TestCoordination: a tool that meets more of a need's words outranks one
// that meets one of them strongly, in its name.
func TestCoordination(t *testing.T) {
	ix := NewIndex([]llmtoolkit.Tool{
		llmtoolkit.MustTool("call_call", "Call; call a call.", nil),
		llmtoolkit.MustTool("meeting_move", "Change the time of a meeting.", nil),
		llmtoolkit.MustTool("clock_time", "Tells the time.", nil),
		llmtoolkit.MustTool("config_change", "Change a setting.", nil),
	})
	assert.Equal(t, "meeting_move", topOf(t, ix, "change the time of the call"))
}

// TestServerNamed: a need that names a server means that server's tools
// over another's with more of its words.
func TestServerNamed(t *testing.T) {
	tool := func(name, desc, server string) llmtoolkit.Tool {
		tl := llmtoolkit.MustTool(name, desc, nil)
		tl.Metadata = map[string]any{MetadataServer: server}
		return tl
	}
	ix := NewIndex([]llmtoolkit.Tool{
		tool("zendesk_search_tickets", "Search Zendesk tickets by status.", "zendesk"),
		tool("jira_search", "Search issues with JQL.", "jira"),
		tool("jira_get_issue", "Get an issue.", "jira"),
	})
	assert.Equal(t, "jira_search", topOf(t, ix, "search my open tickets in jira"))
}

// TestRelated: a related word meets a tool, below one that uses an
// equivalent; a host's group extends the table.
func TestRelated(t *testing.T) {
	tools := []llmtoolkit.Tool{
		llmtoolkit.MustTool("sky_orbit", "Lists the orbits.", nil),
		llmtoolkit.MustTool("sky_planet", "Lists the planets.", nil),
		llmtoolkit.MustTool("weather_now", "The weather at a place.", nil),
	}
	assert.Equal(t, "", topOf(t, NewIndex(tools), "galaxy"))
	ix := NewIndexWith(tools, WithEquivalents([]string{"galaxy", "planet"}), WithRelated([]string{"galaxy", "orbit"}))
	got, err := ix.Search(context.Background(), "galaxy", BM25, 5)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "sky_planet", got[0].Tool.Name)
	assert.Equal(t, "sky_orbit", got[1].Tool.Name)
}

// TestResolverRelatedWords: a Resolver's search uses the host's related
// words.
func TestResolverRelatedWords(t *testing.T) {
	fake := &lt.Fake{}
	ok := func(_ context.Context, c llmtoolkit.Call) (string, error) { return "", nil }
	tool := llmtoolkit.MustTool("sky_orbit", "Lists the orbits.", nil)
	tool.Deferred = true
	fake.Add(tool, ok)
	call := llmtoolkit.Call{Name: SearchToolName, Arguments: map[string]any{"query": "galaxy"}}
	res := llmtoolkit.Execute(t.Context(), New(fake), call)
	assert.Contains(t, res.Content, "No tool matches")
	res = llmtoolkit.Execute(t.Context(), New(fake, WithRelatedWords([]string{"galaxy", "orbit"})), call)
	assert.Contains(t, res.Content, "- sky_orbit:")
}

// TestQuestions: a question asks for a list ("which", "how many") or a
// state ("is", "did"), among tools that otherwise tie.
func TestQuestions(t *testing.T) {
	ix := NewIndex([]llmtoolkit.Tool{
		llmtoolkit.MustTool("tracker_delete_issue", "Deletes an issue.", nil),
		llmtoolkit.MustTool("tracker_list_issues", "Lists issues.", nil),
		llmtoolkit.MustTool("deploy_start", "Starts a deploy.", nil),
		llmtoolkit.MustTool("deploy_state", "The status of a deploy.", nil),
	})
	assert.Equal(t, "tracker_list_issues", topOf(t, ix, "which issues mention the login page"))
	assert.Equal(t, "deploy_state", topOf(t, ix, "did the deploy finish"))
}

// TestValues: a query's values are taken out of its words and stand for
// their kind (a version, a domain, an email address, a price, a time, an
// id), those that say what a tool reads kept ("config.json").
func TestValues(t *testing.T) {
	for _, c := range []struct {
		query, rest string
		kinds       []string
	}{
		{"make 3.0.0-beta.2 the latest", "make   the latest", []string{"version"}},
		{"is coolbakery.io taken", "is coolbakery taken", []string{"domain"}},
		{"set it to Done on monday.com", "set it to Done on monday", []string{"domain"}},
		{"did the mail to jo@acme.io go out", "did the mail to   go out", []string{"email address"}},
		{"charge them 20 dollars", "charge them  ", []string{"price amount currency"}},
		{"push my 3pm to friday", "push my   to friday", []string{"time"}},
		{"open trace 4bf92f3577b34da6", "open trace  ", []string{"id"}},
		{"what street is 48.8584, 2.2945", "what street is  ", []string{"coordinates latitude longitude"}},
		{"restore config.json", "restore config.json", []string{"file"}},
		{"store NPM_TOKEN", "store NPM_TOKEN", []string{"variable"}},
		{"what did people say in #general", "what did people say in ", []string{"channel"}},
		{"post it on r/golang", "post it on ", []string{"subreddit"}},
		{"list the issues of sprint 12", "list the issues of sprint 12", nil},
		{"deploy ec2 and s3", "deploy ec2 and s3", nil},
	} {
		rest, kinds := values(c.query, nil)
		assert.Equal(t, c.rest, rest, c.query)
		assert.Equal(t, c.kinds, kinds, c.query)
	}
	rest, kinds := values("set it to Done on monday.com", func(name string) bool { return name == "monday" })
	assert.Equal(t, "set it to Done on monday", rest)
	assert.Empty(t, kinds, "a host name that is a server's names the server")
	ix := NewIndex([]llmtoolkit.Tool{
		llmtoolkit.MustTool("registry_set_tag", "Point a tag at a published version.", nil),
		llmtoolkit.MustTool("registry_list_beta_testers", "List the beta testers.", nil),
		llmtoolkit.MustTool("domains_check", "Check whether domain names are free.", nil),
		llmtoolkit.MustTool("io_stats", "Disk io statistics.", nil),
	})
	assert.Equal(t, "registry_set_tag", topOf(t, ix, "tag 3.0.0-beta.2 as next"))
	assert.Equal(t, "domains_check", topOf(t, ix, "is coolbakery.io taken"))
}
