// Package toolsearch lets a model find the tools it needs among hundreds:
// the deferred ones ([llmtoolkit.Tool.Deferred], or every tool of a
// resolver with [llmtoolkit.Defer]) are not sent on every turn, and a
// tool_search tool finds them by what they do.
//
// [Index] searches a list of tools in two modes: [BM25] (natural-language
// words, BM25F over five fields, names, descriptions, argument names,
// argument descriptions (with their string enum values) and the name of
// the tool's server
// ([MetadataServer], which mcp.Client sets), names weighing more) and
// [Regex] (an RE2 pattern
// matched without regard to case against each field on its own, so that
// anchors hold per field: "^kubectl_scale$", "_merge_request$"; the
// answer names the fields matched, [Match.Fields]).
//
// The lexical search splits tools and queries with one tokenizer: case
// folded; camelCase, snake_case, kebab-case and digits split, the run
// kept whole as well ("postgresql" meets "PostgreSQL"); stop words
// dropped (question words and auxiliaries too: "how many", "did", "is
// there", "people"); irregular forms brought to their base ("paid" pay,
// "sent" send, "children" child); each word stemmed with the Snowball
// English (Porter2) stemmer ("listing", "lists" meet "list"; "refunded"
// meets "refund"), a word the stemmer would merge with one of another
// meaning kept apart ("activity" and "activate"). Two words a tool writes as one meet it ("roll out" rollout,
// "time off" time_off).
//
// People do not use a catalog's words. [DefaultEquivalents] is a table of
// words that mean the same in tool catalogs: the verbs of tool names with
// the words people use for them, phrasal verbs included (find/search/
// look up, delete/remove/get rid of, cancel/call off, deactivate/cut
// off), and the nouns of common catalog kinds (bug/issue/ticket, PR/pull
// request/merge request, refund/money back, time off/vacation/PTO); a
// query's equivalents count at 0.8 of the weight of its own words, a
// two-word member means what the pair means ("set up" is create, not
// update), its particle two words after it at most ("turn the music
// down", "take bob off the list"), and a word of several groups shares
// that weight among them.
// [DefaultRelated] is a table of words of one topic (song/playlist/
// playback, forecast/rain/temperature), counted at 0.4. A host extends
// them with [WithEquivalents] and [WithRelated] ([NewIndexWith]) or
// [WithEquivalentWords] and [WithRelatedWords] ([New]).
//
// A tool's score is its BM25F score multiplied by the square root of the
// share of the query's words (each with its equivalents) it meets, so
// that a tool that meets most of a need outranks one that meets one of
// its words strongly, and by 1.5 when the query names its server ("in
// jira"); a question asks, at half weight, for a list ("which", "what",
// "how many") or a state ("is", "did"). Numbers alone ("issue 512",
// "at 3") are values, not words of what a tool does, and are left out
// (a run holding letters is kept: "ec2", "s3"); a word no tool has also
// meets, at half weight, the tools' words it begins, as people shorten
// them ("ack" acknowledge, "repo" repository). A query's values, known by
// their form (a version "3.0.0-beta.2", an email address, a host name
// "coolbakery.io", a price "20 dollars", a time "3pm", a hex id, a DOI,
// coordinates, a size "5MB", a duration "2 seconds", a percentage, a
// channel "#general", a subreddit "r/golang"),
// are not words of what a tool does: each is taken out of the query's
// words and stands, at 0.8, for the words of its kind, which the tools'
// arguments use ("version", "domain", "price amount currency", "time").
//
// A host that has embeddings gets a third mode, [Hybrid]: it plugs its
// provider's embedding endpoint in as an [Embedder] ([WithEmbedder] for
// [New], [WithEmbeddings] for [NewIndexWith]); each tool is embedded once,
// its vector kept by a hash of its definition ([VectorCache]), each query
// once a search, and the BM25 ranking and the ranking by cosine to the
// query's vector are fused by reciprocal rank fusion, so that a need
// worded unlike any tool's text ("which tune is this" for
// get_current_track) still finds it. Without an embedder, Hybrid is BM25.
//
// [New] wraps a resolver so that a model uses it through the search, in
// one of two exposures:
//
//   - [Offer] (the default): the tools found join the listed tools from the
//     next turn, appended after the ones listed before, so the cached prefix
//     of the provider's request stays the same;
//   - [Proxy] ([WithProxy]): two fixed tools, tool_search answering the
//     found tools' schemas and call_tool running one by name, validated
//     against that tool's schema; the listed tools never change.
//
// The model calls them so (each tool's description says the same):
//
//	tool_search {"query": "post a message in a Slack channel", "limit": 5}
//	    query (required): the words (BM25) or the pattern (Regex);
//	    limit (optional): how many tools to answer, default 5, at most 20.
//	call_tool {"name": "slack_post_message", "arguments": {"channel": "#deploys", "text": "v2 is out"}}
//	    name (required): a tool tool_search answered;
//	    arguments (required): that tool's arguments, as its parameters say.
//
// In both, a call of a deferred tool the model has not found is answered
// as an unknown tool ([WithUndiscoveredCalls] lets it through), and the
// permission guard, sessions and the audit trail see each call as the call
// it makes: call_tool is a recipe whose one step is the real call, run by
// [llmtoolkit.Execute] through the same stack.
//
// Wrap the composed stack with [New] rather than composing a Resolver:
// llmtoolkit.Compose reads its resolvers' lists once, so it would not list
// the tools found later.
//
// A Resolver holds what one conversation found, in memory: make one per
// conversation (per agentloop.Run), and restore a resumed conversation's
// with [Resolver.Load] (a durable engine does not: a run resumed after a
// crash starts with nothing found, and the model searches again). A
// Session (llmtoolkit.PrepareSession) put around the Resolver declares
// what it lists for the turn: in proxy mode tool_search and call_tool,
// whose real calls pass as steps of the declared call_tool. Providers with a tool search of their own (Anthropic,
// OpenAI Responses) do the search on their side: see package provider's
// ...WithSearch codecs, and use this package for the others (Chat
// Completions, Gemini) or where the host wants the search on its side.
package toolsearch
