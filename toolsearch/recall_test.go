package toolsearch_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
)

// need is one natural-language need of testdata/needs.jsonl, with the
// tool that answers it and the pattern a model would write for it in
// regex mode.
type need struct {
	Need    string `json:"need"`
	Tool    string `json:"tool"`
	Pattern string `json:"pattern"`
}

// loadCatalog reads testdata/catalog.json.
func loadCatalog(t testing.TB) []catalogTool { return loadCatalogFile(t, "catalog.json") }

// loadCatalogFile reads a catalog of testdata.
func loadCatalogFile(t testing.TB, file string) []catalogTool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	require.NoError(t, err)
	var out []catalogTool
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// catalogTools is the catalog as definitions, each deferred.
func catalogTools(t testing.TB) []llmtoolkit.Tool { return catalogFileTools(t, "catalog.json") }

// catalogFileTools is a catalog of testdata as definitions, each deferred.
func catalogFileTools(t testing.TB, file string) []llmtoolkit.Tool {
	t.Helper()
	var out []llmtoolkit.Tool
	for _, c := range loadCatalogFile(t, file) {
		tool, err := llmtoolkit.NewToolFrom(llmtoolkit.Tool{
			Name: c.Name, Description: c.Description, Parameters: c.Parameters,
			Metadata: serverMetadata(c.Source),
		})
		require.NoError(t, err)
		tool.Deferred = true
		out = append(out, tool)
	}
	return out
}

// serverMetadata is the metadata naming a catalog tool's server, as
// mcp.Client sets it: "mcp:github" and "lookalike:gitlab" give github and
// gitlab; codetools none.
func serverMetadata(source string) map[string]any {
	_, server, ok := strings.Cut(source, ":")
	if !ok {
		return nil
	}
	return map[string]any{toolsearch.MetadataServer: server}
}

func loadNeeds(t testing.TB) []need { return loadNeedsFile(t, "needs.jsonl") }

// loadNeedsFile reads needs of testdata, one JSON object a line.
func loadNeedsFile(t testing.TB, file string) []need {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	require.NoError(t, err)
	defer f.Close()
	var out []need
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var n need
		require.NoError(t, json.Unmarshal(sc.Bytes(), &n), sc.Text())
		out = append(out, n)
	}
	require.NoError(t, sc.Err())
	return out
}

// regexOfWords is the regex mode with, as pattern, the need's words
// joined with "|" (the pattern of a model that writes no better one),
// cut to the pattern's limit.
const regexOfWords toolsearch.Mode = "regex-of-words"

// wordsPattern joins the need's words of four letters or more with "|".
func wordsPattern(need string) string {
	var words []string
	for _, w := range strings.FieldsFunc(need, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 4 {
			words = append(words, regexp.QuoteMeta(w))
		}
	}
	p := strings.Join(words, "|")
	for len(p) > toolsearch.MaxPatternBytes {
		words = words[:len(words)-1]
		p = strings.Join(words, "|")
	}
	return p
}

// recallAt is the share of needs whose tool is among the first k answers.
func recallAt(t *testing.T, ix *toolsearch.Index, needs []need, mode toolsearch.Mode, k int) (float64, []string) {
	t.Helper()
	hits := 0
	var misses []string
	for _, n := range needs {
		q, m := n.Need, mode
		switch mode {
		case toolsearch.Regex:
			q = n.Pattern
		case regexOfWords:
			q, m = wordsPattern(n.Need), toolsearch.Regex
		}
		got, err := ix.Search(context.Background(), q, m, k)
		require.NoError(t, err, q)
		found := false
		for _, m := range got {
			if m.Tool.Name == n.Tool {
				found = true
			}
		}
		if found {
			hits++
		} else {
			misses = append(misses, n.Tool+" <- "+q)
		}
	}
	return float64(hits) / float64(len(needs)), misses
}

// TestRecallAt5: over the fixture catalog (at least 400 tools, near
// duplicates among them) and at least 100 needs, the right tool is among
// the first five answers for at least the share measured when this test
// was written, in each mode.
func TestRecallAt5(t *testing.T) {
	tools := catalogTools(t)
	needs := loadNeeds(t)
	require.GreaterOrEqual(t, len(tools), 400)
	require.GreaterOrEqual(t, len(needs), 100)
	names := map[string]bool{}
	for _, tool := range tools {
		names[tool.Name] = true
	}
	for _, n := range needs {
		require.True(t, names[n.Tool], "need names an unknown tool %s", n.Tool)
	}
	ix := toolsearch.NewIndex(tools)
	for _, c := range []struct {
		mode  toolsearch.Mode
		floor float64
	}{
		{toolsearch.BM25, 0.984},
		{toolsearch.Regex, 0.984},
		{regexOfWords, 0.656},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			if c.mode == regexOfWords && testing.Short() {
				t.Skip("long alternations over every tool: not in -short (the race pass)")
			}
			r, misses := recallAt(t, ix, needs, c.mode, 5)
			t.Logf("recall@5 %s: %.3f over %d needs, %d tools; misses: %q", c.mode, r, len(needs), len(tools), misses)
			assert.GreaterOrEqual(t, r, c.floor)
		})
	}
}

// quality is how well a mode finds the needs' tools: the share found
// among the first five (recall@5) and first (top-1), and the mean
// reciprocal rank of the right tool among the first ten (MRR@10).
type quality struct {
	recall5, top1, mrr float64
	misses             []string
}

// measure runs every need in mode over ix.
func measure(t *testing.T, ix *toolsearch.Index, needs []need, mode toolsearch.Mode) quality {
	t.Helper()
	var q quality
	for _, n := range needs {
		got, err := ix.Search(context.Background(), n.Need, mode, 10)
		require.NoError(t, err, n.Need)
		rank := 0
		for i, m := range got {
			if m.Tool.Name == n.Tool {
				rank = i + 1
				break
			}
		}
		switch {
		case rank == 0:
			q.misses = append(q.misses, n.Tool+" <- "+n.Need)
		case rank > 5:
			q.misses = append(q.misses, n.Tool+" <- "+n.Need)
			q.mrr += 1 / float64(rank)
		default:
			q.recall5++
			q.mrr += 1 / float64(rank)
			if rank == 1 {
				q.top1++
			}
		}
	}
	total := float64(len(needs))
	q.recall5, q.top1, q.mrr = q.recall5/total, q.top1/total, q.mrr/total
	return q
}

// logQuality logs a measure, with the misses unless the catalog is held
// out.
func logQuality(t *testing.T, what string, q quality, needs, tools int, heldOut bool) {
	t.Helper()
	if heldOut {
		t.Logf("%s: recall@5 %.3f, top-1 %.3f, MRR %.3f over %d needs, %d tools (held out: misses not logged)",
			what, q.recall5, q.top1, q.mrr, needs, tools)
		return
	}
	t.Logf("%s: recall@5 %.3f, top-1 %.3f, MRR %.3f over %d needs, %d tools; misses: %q",
		what, q.recall5, q.top1, q.mrr, needs, tools, q.misses)
}

// TestLexicalQuality: over the fixture catalog and over a second,
// independent one (testdata/catalog2.json: tools modelled on GitHub,
// GitLab, Jira, Linear, Slack, Notion, Google Workspace, databases,
// Kubernetes, clouds, payments and monitoring servers, with needs in
// people's wording, testdata/needs2.jsonl), and a third one
// (testdata/catalog3.json, 299 tools of kinds the first two lack:
// Airtable, Trello, Todoist, Spotify, YouTube, X, Reddit, WordPress,
// Mailchimp, Zoom, DocuSign, QuickBooks, Square, Supabase, Kafka,
// Jenkins, Argo CD, Vault, Okta, Home Assistant, weather, flights, HR,
// hiring, PDF and browser tools; 158 needs, testdata/needs3.jsonl),
// BM25's recall@5, top-1 and MRR reach at least the floors measured when
// they were set. The third catalog was written, and committed, before any
// tuning that followed, and was not tuned on until the session that wrote
// the fourth (testdata/catalog4.json, 312 tools of 54 server kinds none
// of the first three has: package registries, CI/CD, calendars booking,
// transactional and IMAP mail, CRM, marketplaces, analytics, object
// storage, DNS and CDN, maps, translation, payroll, event ticketing, help
// desks, logs and traces, uptime and status pages, feature flags, secret
// stores, site and web search, code scanning, infrastructure as code,
// forms, expenses, money transfer, data pipelines, restaurant booking,
// references, identity; 200 needs, testdata/needs4.jsonl). The fourth was
// held out: written and committed before the tuning that followed, its
// misses not logged. (It was measured before the tuning, BM25 0.355 /
// 0.175 / 0.256, and once after, 0.475 / 0.240 / 0.346; 0.475 / 0.235 /
// 0.343 once a pair of words is joined only where a tool writes it as one
// word. Its author also wrote the tables of equivalent and related words,
// so it is not independent of them.) It is held out no more: the session
// of issue 54 that followed read its misses, sorted them by category and
// tuned on them (the kinds of values a query holds, the phrasal verbs
// whose particle follows the object, words of the tables), so its figures
// (0.475 / 0.235 / 0.343 before, 0.625 / 0.310 / 0.437 after; 0.655 /
// 0.370 / 0.495 after the session that followed: words the stemmer merged
// with a table word of another meaning kept apart, a concept's terms
// saturated together, "people" a stop word) measure tuning, not what an
// unseen catalog gets, and its misses are logged; the
// fifth (testdata/catalog5.json, 213 tools of
// 58 server kinds none of the first four has: time tracking, shipping,
// rides, stays, local businesses, films, books, games, the fediverse,
// social posting, newsletters, site builders, subscriptions billing, bank
// data, crypto and stocks, smart home, cars, fitness, learning platforms,
// papers, notebooks, bookmarks, notes, small clouds, virtual machines,
// configuration management, service discovery, reverse proxies, law
// practice, health records, real estate, food and grocery delivery, trains,
// e-books, self-hosted git, code search, writing checks, voice and
// transcription, design; 167 needs in people's wording,
// testdata/needs5.jsonl) takes its place: committed before any ranking
// change that followed, measured before it (BM25 0.659 / 0.401 / 0.514,
// hybrid 0.617 / 0.311 / 0.437) and once after (0.671 / 0.413 / 0.525,
// hybrid 0.635 / 0.311 / 0.441, with enum values searched: its author
// wrote its enums and its needs), its misses never logged nor read; and
// once after the session of issue 54 (values, separated particles, words
// of the tables from catalog 4's misses), its last ranking change made
// first: BM25 0.688 / 0.419 / 0.533 (115 and 70 of 167 needs, the MRR
// as logged, rounded), hybrid 0.634 / 0.299 / 0.436 (the fake embedder's
// fusion lost two needs' first places). The floors are the figures
// measured, to the third decimal (those two MRRs one thousandth below
// their rounded figure). The sixth (testdata/catalog6.json, 453 tools of
// 25 servers modelled on the kinds the issue's own held-out catalog has:
// GitHub, GitLab, Jira and Confluence, Linear, Slack, Notion, Google
// Workspace, seven databases, Kubernetes, AWS, GCP, Azure, Stripe, PayPal,
// Datadog, Sentry, PagerDuty, Grafana, Prometheus; 155 needs in people's
// wording, testdata/needs6.jsonl) was written by an author who read
// neither the search's tables nor any other catalog, ran no search over
// it, and committed it before the ranking changes of that session;
// measured once on the code before them (BM25 0.897 / 0.632 / 0.752,
// hybrid 0.819 / 0.516 / 0.635) and once after (BM25 0.910 / 0.677 /
// 0.779, 141 and 105 of 155 needs; hybrid 0.826 / 0.516 / 0.636), its
// misses never logged nor read. The seventh (testdata/catalog7.json, 484
// tools of 44 servers of the same kinds but mostly other products:
// Bitbucket, Gitea, Azure DevOps, Asana, ClickUp, Monday, Trello, Teams,
// Discord, Outlook, OneDrive, SharePoint, Confluence, Dropbox, Box,
// Airtable, Elasticsearch, OpenSearch, Cassandra, DynamoDB, ClickHouse,
// Supabase, Neon, Docker, Helm, OpenShift, Terraform Cloud, Cloudflare,
// DigitalOcean, Vercel, Netlify, Fly.io, Adyen, Square, Braintree, Paddle,
// New Relic, Opsgenie, Honeycomb, Splunk, Better Stack, and some GitHub,
// Slack and Stripe; 173 needs, testdata/needs7.jsonl) was written the same
// way by another author, after that session's changes; measured once on
// the code before them (BM25 0.960 / 0.821 / 0.879, hybrid 0.896 / 0.636
// / 0.742) and once after (BM25 0.965 / 0.838 / 0.892, hybrid 0.902 /
// 0.636 / 0.740), its misses never logged nor read. The second round of
// that session (a query concept's terms saturating together, words that
// keep a stem of their own, "people" a stop word; tuned on catalogs 1-4)
// was merged whole, then the three measured once more: BM25 catalog 5
// 0.695 / 0.419 / 0.530, 6 0.910 / 0.690 / 0.789, 7 0.971 / 0.850 /
// 0.901; hybrid 5 0.617 / 0.299 / 0.436, 6 0.819 / 0.523 / 0.641, 7
// 0.908 / 0.636 / 0.740 (catalog 5's MRR and the hybrid recalls of 5 and
// 6 lower: the floors follow the figures, not the other way). Their floors
// are the figures truncated, the MRRs one thousandth below the rounded
// figure.
func TestLexicalQuality(t *testing.T) {
	for _, c := range []struct {
		catalog, needs     string
		minTools, minNeeds int
		recall5, top1, mrr float64
		heldOut            bool
	}{
		{"catalog.json", "needs.jsonl", 400, 100, 0.984, 0.890, 0.933, false},
		{"catalog2.json", "needs2.jsonl", 150, 80, 0.940, 0.777, 0.845, false},
		{"catalog3.json", "needs3.jsonl", 250, 100, 0.917, 0.613, 0.724, false},
		{"catalog4.json", "needs4.jsonl", 300, 150, 0.655, 0.370, 0.493, false},
		{"catalog5.json", "needs5.jsonl", 200, 150, 0.694, 0.419, 0.529, true},
		{"catalog6.json", "needs6.jsonl", 400, 150, 0.909, 0.690, 0.788, true},
		{"catalog7.json", "needs7.jsonl", 400, 150, 0.971, 0.849, 0.900, true},
	} {
		t.Run(c.catalog, func(t *testing.T) {
			tools := catalogFileTools(t, c.catalog)
			needs := loadNeedsFile(t, c.needs)
			require.GreaterOrEqual(t, len(tools), c.minTools)
			require.GreaterOrEqual(t, len(needs), c.minNeeds)
			names := map[string]bool{}
			for _, tool := range tools {
				names[tool.Name] = true
			}
			for _, n := range needs {
				require.True(t, names[n.Tool], "need names an unknown tool %s", n.Tool)
			}
			q := measure(t, toolsearch.NewIndex(tools), needs, toolsearch.BM25)
			logQuality(t, c.catalog+" bm25", q, len(needs), len(tools), c.heldOut)
			assert.GreaterOrEqual(t, q.recall5, c.recall5, "recall@5")
			assert.GreaterOrEqual(t, q.top1, c.top1, "top-1")
			assert.GreaterOrEqual(t, q.mrr, c.mrr, "MRR")
		})
	}
}

// TestHybridQuality: the same catalogs and needs in Hybrid mode, with the
// deterministic fake embedder (a bag of hashed words: it knows no
// synonyms, so it measures what the fusion does to BM25's ranking, not
// what a real model would add); floors as measured when set.
func TestHybridQuality(t *testing.T) {
	for _, c := range []struct {
		catalog, needs     string
		recall5, top1, mrr float64
		heldOut            bool
	}{
		{"catalog.json", "needs.jsonl", 0.953, 0.851, 0.892, false},
		{"catalog2.json", "needs2.jsonl", 0.837, 0.555, 0.679, false},
		{"catalog3.json", "needs3.jsonl", 0.677, 0.398, 0.515, false},
		{"catalog4.json", "needs4.jsonl", 0.370, 0.150, 0.248, false},
		{"catalog5.json", "needs5.jsonl", 0.616, 0.299, 0.435, true},
		{"catalog6.json", "needs6.jsonl", 0.819, 0.522, 0.640, true},
		{"catalog7.json", "needs7.jsonl", 0.907, 0.635, 0.739, true},
	} {
		t.Run(c.catalog, func(t *testing.T) {
			tools := catalogFileTools(t, c.catalog)
			needs := loadNeedsFile(t, c.needs)
			ix := toolsearch.NewIndexWith(tools, toolsearch.WithEmbeddings(newFakeEmbedder(), nil))
			q := measure(t, ix, needs, toolsearch.Hybrid)
			logQuality(t, c.catalog+" hybrid", q, len(needs), len(tools), c.heldOut)
			assert.GreaterOrEqual(t, q.recall5, c.recall5, "recall@5")
			assert.GreaterOrEqual(t, q.top1, c.top1, "top-1")
			assert.GreaterOrEqual(t, q.mrr, c.mrr, "MRR")
		})
	}
}
