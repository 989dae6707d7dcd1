// Package trace keeps an insert-only audit log of tool calls: one row of the
// tool_traces table per call, written through gorm, on an embedded SQLite
// file by default ([OpenSQLite]) or on PostgreSQL (gorm.io/driver/postgres).
//
// The model is [Trace]; [New] builds a valid one from [Attrs] (the
// changeset), [Migrate] creates the table, its indexes and the guards that
// make it insert-only, and [List] reads it back, newest first.
//
// The host decides where the table lives: [DefaultTable] unless [InTable]
// names another, schema-qualified where the database has schemas
// ("tenant_42.tool_traces"); Migrate, Record and List all take it. With
// [TableFrom], a Recorder picks the table of each call from its context (a
// tenant's schema, say), so one Recorder and one pool serve many tenants.
// Names are validated and quoted ([ErrInvalidTable]): a table name can never
// become SQL.
//
// [Record] wraps any [llmtoolkit.Resolver] in a [Recorder] that times each
// call and writes it as one trace, with the conversation's IDs taken from
// the context ([WithConversation], or the session map's tenant_id,
// conversation_id and iteration keys); a sub-agent's calls keep the
// parent's conversation and add the sub-agent's id
// ([llmtoolkit.AgentIDFrom]) in the agent_id column. Sensitive argument fields are
// redacted at any depth before anything is written, long results are cut
// and marked, and writes are synchronous unless the [Async] option batches
// them through a bounded queue that [Recorder.Close] flushes.
//
// A row's Result column is {"content": "..."} for a call that succeeded and
// {"error": "..."} for one that failed (with "content" too when the tool
// returned some alongside its error); a cut value adds "truncated": true and
// the original size in bytes under "content_bytes" or "error_bytes".
package trace
