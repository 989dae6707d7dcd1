// Package mcp connects llmtoolkit to the Model Context Protocol, with the
// official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// Both directions are covered:
//
//   - [NewServer], [Serve] and [Handler] expose any [llmtoolkit.Resolver] to
//     MCP clients (Claude Desktop, editors, inspectors). tools/list comes
//     from the resolver's Tools, with schemas as given and annotations as
//     MCP's hints; tools/call goes through [llmtoolkit.Execute], so a
//     failing, panicking or mis-called tool answers with a result marked
//     isError (never a protocol error); the text content is the model's
//     answer, and a [llmtoolkit.Display] goes out in the result's _meta
//     under [DisplayMetaKey], never as structuredContent.
//   - [Connect] turns any MCP server into a [llmtoolkit.Resolver]: a [Client]
//     lists the server's tools once and calls them with tools/call; results
//     marked isError become a [*ToolError]. A Client composes with local
//     tools through [llmtoolkit.Compose].
//
// Progress goes both ways: what a served tool reports with
// [llmtoolkit.ReportProgress] goes to a client that asked for it as
// notifications/progress, and a Client asks a server for progress when
// its caller's context has a progress function (agentloop sets one) and
// passes each notification on to it while the call runs.
//
// [CommandTransport] runs an MCP server as a subprocess over stdio, and
// [HTTPTransport] reaches one over streamable HTTP. A server on stdio uses
// [StdioTransport] (a [LineTransport]), which answers a malformed line with
// a JSON-RPC error and goes on serving, where the SDK's transport would end
// the session; [Serve] uses it for the SDK's stdio and io transports too.
// Every answer fits in one message a Go SDK client accepts (16 MiB): a tool
// result's text and Display are cut to fit, with a marker.
//
// # Protocol versions and replicas
//
// [Handler], [Serve] and [Connect] speak the current protocol,
// [CurrentProtocolVersion] (2026-07-28: no initialize, each request
// carrying its version and the client's capabilities), and every earlier
// version the SDK supports, with no option. Over HTTP a request of the
// current protocol holds no session, so any number of [Handler] replicas
// serve such clients behind a plain round-robin load balancer; legacy
// clients get a session kept in one process, unless [WithStateless] serves
// them without one too (its doc says what they lose).
// [HTTPHandler.Shutdown] drains a replica: new requests are answered 503
// with a Retry-After (clients and the SDK's transport retry them, on
// another replica), the calls in flight finish, bounded by its context.
// TestReplicasBehindRoundRobin runs three replica processes behind an
// httputil.ReverseProxy recording to one PostgreSQL, one SIGKILLed and
// one drained mid-run; scripts/conformance.sh runs the official
// conformance suite against the server and the client.
//
// Skills travel too, as MCP's skills extension (SEP-2640,
// [SkillsExtension]) defines them: [WithSkills] serves a skills.Loader's
// skills (skills/list, skills/get, each file as a skill:// resource with
// its sha256 digest and size, resources/directory/read), and
// [Client.Skills] is a source of a skills.Loader that lists a server's
// skills, fetches none of their files before activation, and refuses
// every file whose size, digest or frontmatter is not the listed one.
// scripts/conformance.sh runs the suite's seven sep-2640 scenarios.
//
// A tool that needs the client's user (an approval, a missing argument)
// returns [InputRequired]: the client gets an input-required result
// (SEP-2322), answers, and calls again; the tool reads the answers with
// [InputFrom]. The state it keeps across the round trip is signed
// ([WithRequestStateKey]). A tool reads the client's capabilities with
// [ClientCapabilitiesFrom] and refuses a call it cannot serve without
// one with [MissingClientCapability]. The host of an agent-guarded
// resolver asks the client's user to approve a call with [Approval] in
// its approval callback (agent.Pending leaves the call pending meanwhile):
// the answer is bound to the call and carried in the signed state, so it
// works on the stateless path and across replicas. Over a legacy client's
// session a tool may also reach the client while it runs: [Log] sends it
// log messages, [Elicit] and [CreateMessage] ask it (elicitation,
// sampling); where there is no session (the current protocol,
// [WithStateless]) they return [ErrNoSession] and the tool asks through
// [InputRequired] instead.
//
// Parts ([llmtoolkit.Result.Parts]: images, documents) cross MCP both
// ways. The server sends each after the text, in order: an image as image
// content, an audio file as audio content, any other file (a PDF) as an
// embedded resource with its bytes (blob; its URI "llmtoolkit:part/N/NAME"
// keeps the name), a part by URL as a resource link, a text part as text
// content; they get what the text and the Display left of 15 MiB, and a
// part that does not fit is left out whole, named in a last text content
// and logged. The Client keeps image, audio and blob content as parts (an
// audio part has no name; a resource's name is its URI's last element);
// text content, text resources and resource links stay in the text, in
// order among themselves. Where nothing would keep the parts (Resolve
// called outside Execute with no part sink: [llmtoolkit.PartsKept]), each
// is described in the text in its place, in brackets.
//
// A remote tool's parameters annotated "x-mcp-header" (SEP-2243) are
// mirrored by the SDK's transport into Mcp-Param-{Name} headers of the
// tools/call request; a parameter absent or null gets no header, and the
// call is sent all the same. [llmtoolkit.Execute] validates a call before
// it reaches the Client: a null for an optional parameter whose schema
// does not accept null (what a provider's strict mode sends for an
// argument left out) counts as absent, so the call leaves without it, with
// no header and no null in the body for the server's validation to refuse
// (TestClientParamHeadersNull). A null for a required parameter, or a
// value of the wrong type, is refused before it leaves, with a message
// for the model.
//
// The SDK's package is also named mcp; this package imports it as sdk, and
// its transports ([sdk.Transport]) are accepted as they are.
//
// # Bad peers
//
// The server survives bad peers: over stdio, LineTransport answers a
// malformed line with the JSON-RPC error (-32700, -32600) and goes on; a
// tool's answer is capped (text 8 MiB after encoding, Display 4 MiB, cut on
// its decoded JSON with its keys kept) so it always fits the 16 MiB frame;
// handler panics become error results (TestServeAnswersMalformedLines,
// TestServerCapsLargeResults; through llmtoolkit mcp,
// TestMCPAnswersMalformedLines). The server sends no answer to a request the
// client cancelled (MCP's rule; the SDK sent code 0), and an error of code 0
// as -32603 (TestCancelledRequestIsNotAnswered). The transport's reader logs
// a panic and ends the session instead of the process.
//
// A server cannot flood a client: every message the client reads is bounded
// by [WithMaxAnswerBytes] (16 MiB by default) on every transport (a stdio
// line, an application/json answer, a server-sent event); past it the
// client reads no further, closes the connection and the call fails with
// [ErrAnswerTooLarge] (TestClientAnswerBounded: 128 MiB of JSON, read
// whole before, now costs the bound's size). A listing reads at most [WithMaxToolPages]
// (100) pages and [WithMaxTools] (1,000) tools, and a cursor sent twice ends
// it ([ErrListLimit], TestRefreshBounded against a hand-written JSON-RPC
// server). Over stdio ([CommandTransport]) the client reads through a client
// LineTransport: a bad line is dropped and logged, a malformed answer fails
// only its call (TestClientSurvivesBadFrames). [Connect] skips, with a
// warning naming it, a remote tool whose schema expands past
// [WithMaxSchemaNodes] subschemas once its references are followed
// (llmtoolkit.Tool.SchemaNodes, default 20,000;
// TestConnectRefusesComplexSchemas).
//
// The client reads a remote tool's sensitive fields and its deferral from
// its _meta ([MetaSensitiveFields], [MetaDeferred], sent by the server; to
// defer every tool of a server whatever it sends, wrap the client with
// llmtoolkit.Defer), and older servers'
// structuredContent as the Display. [WithPropagator] carries the caller's
// trace context in each request's _meta (the server extracts it), so hosts
// trace over MCP without this package importing OpenTelemetry.
//
// # Authorization, tenants and rate limits
//
// Over HTTP, [WithBearerAuth] makes [Handler] an OAuth 2.1 resource server
// as the MCP specification describes: every request needs a bearer token
// that a [Verifier] accepts ([JWTVerifier]: JWTs on a cached JWKS, an
// allow-list of asymmetric algorithms, iss, aud, exp, nbf and iat checked;
// or the host's own, such as token introspection), the protected resource
// metadata (RFC 9728) is served at its well-known URL, and refusals carry
// the challenges clients act on (401 invalid_token, 403
// insufficient_scope, both with resource_metadata). The tenant and the
// conversation of each call come only from the verified token, through
// the host's [IdentityFunc] ([ClaimsIdentity] reads two UUID claims): they
// are put in the call's session map, where package trace (and its
// per-tenant WithTableFrom), otelkit and package agent read them, and nothing
// the client sends replaces them; a token that names none is refused
// before any call runs, and an MCP session is bound to the identity that
// opened it. A [ToolPolicy] decides per caller which tools it sees and may
// call, checked on every tools/call. The token table of TestBearerTokenTable
// shows each refusal (status, challenge, no tool run, no row) and that a
// valid token's calls land in its tenant's table only, on SQLite and
// PostgreSQL. Every refusal is logged as a warning, never with the token;
// a refused token's reason reaches the client in the challenge's
// error_description (RFC 6750) and in a JSON-RPC error body, which the
// official SDK's client reports (TestBearerRefusalsAreExplained). A call
// refused by the ToolPolicy or a rate limit is told to its tool's
// observers as Execute tells its own refusals, so a trace.Recorder records
// it as a refused row in the caller's tenant table, with [ErrToolNotAllowed]
// or [ErrRateLimited] (TestRefusedCallsAreRecordedAndLogged).
//
// [WithRateLimits] bounds calls per tenant and per tenant and tool with
// token buckets (golang.org/x/time/rate); a call over a limit is answered
// with an error result saying when to retry ([RateLimitMetaKey]), never
// run, and one tenant never slows another. A refused call or a name the
// server has no tool for makes no per-tool bucket, and at
// [RateLimits.MaxKeys] the least recently used bucket is forgotten in
// constant time (TestRateLimiterKeysBounded). [WithAllowedOrigins] refuses
// browser requests from other origins; the SDK's DNS-rebinding protection
// is on in Handler.
//
// [WithOAuth] lets [Connect] reach servers that require authorization,
// with the SDK's OAuth handlers (authorization code with PKCE, client ID
// metadata documents, pre-registration or dynamic registration, client
// credentials); tokens are refreshed by the handler and never logged nor
// put in _meta. scripts/conformance_auth.sh runs the MCP conformance
// suite's client authorization scenarios against it.
//
// # Tasks
//
// A long tool call can run as an MCP task (SEP-2663, the tasks extension
// of 2026-07-28, which the official Go SDK does not have): [Handler]
// answers its tools/call at once with the task (resultType "task", a
// taskId), runs the tool in the background, and answers tasks/get (the
// status; the result or the error inlined once it is over), tasks/update
// (the client's answers to the tool's input requests) and tasks/cancel
// (the tool's context ends). [WithTaskTools] says which tools run as
// tasks, by [TaskSupport]: TaskOptional when the client declared
// [TasksExtension], TaskRequired always (else the -32021 error), or
// TaskOnDemand once the tool returns [ErrRunAsTask] (after gathering input
// synchronously, say). A tool's error result completes its task (isError);
// a protocol error or a panic fails it, the panic's value not sent. A tool
// that returns [InputRequired] in a task parks it as input_required; the
// answers may come one at a time, and once all are in the tool runs again
// with them ([InputFrom]) and its state, in a new round. [TaskIDFrom] tells
// a tool it runs in a task. Under [WithBearerAuth] a task belongs to its
// caller's tenant and subject: another caller is told there is no such
// task, and the task runs with its caller's tools only; with
// [WithPropagator] it runs in the trace context of the call that created
// it. The routing
// headers of tasks/* (Mcp-Method, Mcp-Name) must match the body. The
// tasks/* requests are not counted by [WithRateLimits]; the skills
// requests of [WithSkills] are, per tenant, by its Tenant limit.
//
// Tasks live in a [TaskStore] ([WithTaskStore]): by default a
// [MemoryTaskStore], bounded (a cap, a TTL, a share per tenant or session,
// a grace period for finished tasks) but of one process only. A task
// call's arguments are validated against its tool's schema before the
// task is stored: bad ones are answered at once with the error result
// ([llmtoolkit.ValidateCall]).
// Replicas share one, durable: package durable/dbos's TaskStore keeps
// tasks in the DBOS database and runs each round as a DBOS workflow, so
// any replica answers for any task and a task whose replica died is run
// again, from its start, at the replica's restart. Tasks are served over
// HTTP only: over [Serve] a call runs synchronously.
//
// On the client side, [WithClientTasks] makes [Connect] (over
// [HTTPTransport], on the current protocol) declare the extension and
// follow a task to its end, so a tool call that the server runs as a task
// returns its result as a synchronous one would; the call's context ending
// cancels the task. A host that follows tasks itself keeps only their IDs:
// [Client.StartTask] starts a call as a task without waiting, and
// [Client.GetTask], [Client.PollTask] and [Client.CancelTask] take the ID
// ([TaskState] is what they return: status, poll interval, the result or
// the error, the input requests). The extension answers tasks/cancel with
// an empty acknowledgement; CancelTask reads the status after it.
package mcp
