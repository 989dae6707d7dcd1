// Package trace keeps an insert-only audit log of tool calls: one row of the
// tool_traces table per call, written through gorm, on an embedded SQLite
// file by default ([OpenSQLite]) or on PostgreSQL (gorm.io/driver/postgres).
//
// The model is [Trace]; [New] builds a valid one from [Attrs] (the
// changeset), [Migrate] creates the table, its indexes and the guards that
// make it insert-only, and [List] reads it back, newest first.
//
// The host decides where the table lives: [DefaultTable] unless [WithTable]
// names another, schema-qualified where the database has schemas
// ("tenant_42.tool_traces"); Migrate, Record and List all take it. With
// [WithTableFrom], a Recorder picks the table of each call from its context (a
// tenant's schema, say), so one Recorder and one pool serve many tenants.
// Names are validated and quoted ([ErrInvalidTable]): a table name can never
// become SQL.
//
// [Record] wraps any [llmtoolkit.Resolver] in a [Recorder] that times each
// call and writes it as one trace, with the conversation's IDs taken from
// the context ([WithConversation], or the session map's tenant_id,
// conversation_id and iteration keys); a sub-agent's calls keep the
// parent's conversation and add the sub-agent's id
// ([llmtoolkit.Scope].AgentID) in the agent_id column. The model's id of the
// call ([llmtoolkit.Call.ID]) goes in the call_id column, indexed with the
// tenant and conversation, so a row can be matched to the tool call in the
// model's conversation ([Filter.CallID]); with [WithIdempotentCalls] a
// call retried with the same id keeps one completed row (the others are
// skipped, counted and logged). Sensitive argument fields are
// redacted at any depth before anything is written, long results are cut
// and marked, and writes are synchronous unless the [WithAsync] option batches
// them through a bounded queue that [Recorder.Close] flushes.
//
// A row's Result column is {"content": "..."} for a call that succeeded and
// {"error": "..."} for one that failed (with "content" too when the tool
// returned some alongside its error); a cut value adds "truncated": true and
// the original size in bytes under "content_bytes" or "error_bytes". The
// parts a tool attached ([llmtoolkit.Attach]: images, documents) are
// described under "parts", never stored: [{"kind", "media_type", "bytes",
// "sha256"}] per part, in order (at most 64; "parts_omitted" counts the
// rest); the SHA-256 is of a part's bytes, text or URL. The files a call
// names, as its tool declares them ([llmtoolkit.Tool.Paths], read by
// [llmtoolkit.PathArguments.Resolve] before it runs, the permission checks'
// reading), are under "paths": each canonical path once, in the order
// named (a patch touching three files: those three, a move both ends; a
// memory command on /memories/x: the real file in the memory folder), at
// most 200 ("paths_omitted" counts the rest), a refused call's too
// (TestRowsHoldTheRealPaths).
//
// # The audit promise
//
// Every wrapper keeps it (Compose, Filter, sessions, the agent guard,
// otelkit, a user's own; the Recorder inside or outside them; Execute and
// agentloop; SQLite and PostgreSQL):
//
//   - every call that reaches a Recorder leaves exactly one row: resolved
//     calls, calls Execute refused, calls an MCP server refused before
//     they ran (mcp's ToolPolicy and rate limits), recipe calls (their
//     steps' rows carry parent_id, the recipe row's ID); and a job a call
//     started that outlives it (codetools' background jobs and terminals)
//     leaves one more row when it ends, tool_name "job_end", attributed as
//     the starting call (tenant, conversation, agent_id, call_id,
//     iteration), its arguments the job_id and the tool that started it,
//     its result the end and the last output, scrubbed as a call's is;
//   - the iteration comes from the context (agentloop's count winning over
//     one given with the conversation); a sub-agent's id goes in the nullable
//     agent_id column, the model's call id in the nullable call_id column,
//     what a call's own model calls cost (a spawn_agent call's sub-agent,
//     told by a shown [CostReporter]) in cost_usd and unpriced_calls (all
//     added to older tables by Migrate);
//   - the tenant and conversation come from [WithConversation], else from the
//     session map a Session binds: for the calls it resolves and, as its
//     definitions' observers are told with the map bound, for those Execute
//     answers itself (refused, recipe parents); a Recorder outside a Session
//     does not see its map;
//   - a call that cannot be attributed (no tenant and conversation IDs, and no
//     [WithDefaultConversation]) is refused before the tool runs with
//     [ErrUnattributed], unless [WithBestEffort]: then its row is dropped,
//     counted ([Recorder.Stats]) and logged; a database error is logged,
//     counted and given to [WithOnError] (and fails the call under [WithStrict]);
//   - nothing secret is stored: sensitive fields are [Redacted] in the
//     arguments, their values (strings and numbers of 3 bytes or more; for a
//     malformed call, the values internal/redact finds leniently in its raw
//     text, as written, decoded and Go-quoted) and every URL password (also in
//     the forms a browser reads as one though Go does not: http:user:pw@host,
//     backslashes, any number of slashes) are scrubbed from arguments, content
//     and error text, a recipe row scrubbing its steps' secrets too; a
//     secret recorded in one call is scrubbed from its conversation's later
//     rows, by this Recorder (it remembers them), and, with
//     [WithSharedSecrets], by every Recorder sharing the database and the
//     host's key (replicas, a restarted host): the secrets are kept in
//     [SecretsTable] sealed (AES-256-GCM, bound to tenant and conversation)
//     and named by an HMAC digest, never in clear, shared when the call
//     begins and read before each row is written; a row whose
//     conversation's secrets cannot be read or opened is not written
//     (TestSharedSecretsAcrossReplicas, TestSharedSecretsBeforeTheToolRuns);
//   - arguments and results are capped (64 KiB by default) and marked
//     (_truncated/_bytes, truncated/content_bytes), cut on a UTF-8 boundary
//     by internal/textutil.CutUTF8; tool_name, agent_id and call_id are cleaned (NUL
//     and invalid UTF-8 become U+FFFD) and capped at [MaxTextBytes] (1 KiB),
//     so any text leaves its row on both databases;
//   - an async batch, with its row-by-row retry, has one write timeout: Close
//     against a hung database is bounded per batch; the async writer turns a
//     panic while writing a batch into failed writes of its rows (counted,
//     logged, given to WithOnError, returned by Close) and goes on;
//   - the row lands in the table the host chose (see above); async batches
//     are grouped by table. Names are identifiers only, quoted with the
//     dialect's quoting, else ErrInvalidTable; a call whose table cannot be
//     chosen, or whose table does not exist (Migrate was not called:
//     [ErrNoTable]), is refused before the tool runs, as an unattributed one. Migrate
//     puts the indexes, the insert-only triggers and (PostgreSQL) their
//     function in the table's schema, named after the table, checks that
//     every index exists on the table (a name taken by another relation is an
//     error), and serialises concurrent migrations of one table (an advisory
//     lock on PostgreSQL, retries of a busy transaction on SQLite). On SQLite
//     an unqualified name is main.NAME (never an attached database's table),
//     and a name differing from an existing table's only by case is refused
//     (ErrInvalidTable) by Migrate and by a Recorder.
//
// A Recorder is a wrapper and an observer: it never changes what the tool
// sees. It does not import agentloop: the iteration and a sub-agent's id
// travel through the root's context accessors. SQLite is reached through
// internal/sqlitegorm (pure Go, no driver registered by name), PostgreSQL
// through pgx.
package trace
