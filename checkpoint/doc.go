// Package checkpoint records the files under a root folder at every turn
// of an agent, whatever changed them (the file tools, bash, a background
// job, a sub-agent), and puts the folder back as it was at any of them.
//
// # Checkpoints
//
// A [Checkpointer] records one root. [Checkpointer.Save] walks it and
// compares every file's stat (size, mtime, ctime, inode, mode) with the
// last walk's, reading only what moved, so a turn in which bash ran `sed
// -i` or `rm -r` is recorded exactly, not guessed, at the cost of an
// lstat per entry when nothing changed (a folder is listed again only
// when its own stat moved; below git status's CPU time on Go's source
// tree: bench/checkpoint.sh). Each folder becomes a listing blob and each file a
// content blob, named by SHA-256: content-addressed, deduplicated across
// checkpoints, roots and conversations, DEFLATE-compressed. Symbolic links
// are recorded, never followed; pipes, sockets and devices are recorded
// by kind, never opened; files over [WithMaxFileBytes] by size and hash
// only; .git folders, what .gitignore files ignore and what the host
// excludes ([WithExcluded]) are left out, as codetools' walkers leave
// them. A checkpoint is attributed as the audit rows are
// ([AttributionFrom]: tenant, conversation, agent, iteration, call id).
// A Save with a key returns the checkpoint already saved with it, so a
// turn resumed after a crash (durable runs) has one checkpoint, not two.
//
// # Every turn
//
// [Resolver] wraps the host's resolver (codetools, a Session, a Compose of
// them) so that the root is checkpointed before the first call of every
// turn of agentloop.Run, whichever tool then writes: the next turn's
// checkpoint holds all of it (bash's writes, a background job's, a
// sub-agent's under the root); it names in [Checkpoint].Jobs exactly the
// calls whose background jobs ran at some point since the previous
// checkpoint (each job's end is recorded as it comes, watched or not).
// [WithEveryCall] adds one before each call.
// A turn checkpoint names the turn's first call, so [CutHistory] cuts the
// conversation at the same turn: rewind the code, the conversation, or
// both. [Checkpointer.Display] gives a turn's diff as a Display payload
// (kind [DisplayCheckpoint]); [Tools] offers checkpoint_list and
// checkpoint_rewind to a remote agent (over MCP: off unless the host
// serves them), each call confined to its own tenant and conversation.
//
// # Rewind
//
// [Checkpointer.Rewind] puts the root back exactly: contents, modes,
// owners, times, links, pipes, folders; new files removed, deleted ones
// restored. A dry run lists the changes and writes nothing. Every change is put to the
// host's allow functions ([WithAllow], [RewindOptions.Allow]: package
// agent's deny rules) before anything is written: one refusal refuses the
// whole rewind. Files are written under a temporary name and renamed into
// place; folders are reached from the root one name at a time without
// following a link. The state a rewind replaces is itself a checkpoint
// (kind before-rewind), so a rewind is undone by rewinding to it.
// [Rewound.Skipped] names what could not be restored (files over the
// size bound, devices, folders still holding ignored files, owners the
// process may not set). Owners and modification times are restored
// (those of checkpoints saved before they were recorded are left as they
// are), and so are hard links: the paths that named one file name one
// file again, and files linked since are made separate.
//
// # Storage
//
// A [Store] keeps checkpoints and blobs in two tables of a SQL database
// through gorm: SQLite by default ([OpenSQLite]: a 0600 file, or the
// trace table's database), PostgreSQL for deployments (the same code on
// gorm's postgres driver). Rows are written after the blobs they name, in
// that order, so a process killed mid-Save leaves the store consistent
// (at worst unreferenced blobs). It is bounded: [WithMaxPerConversation],
// [WithMaxTotal] and [WithMaxAge] drop the oldest checkpoints as new ones
// are saved (never a root's newest), and [Store.Collect] removes the
// blobs no checkpoint names (mark from the remaining trees, sweep the
// rest, sparing blobs younger than [WithCollectGrace]). Hosts run
// Collect from time to time (the CLI's `checkpoints collect`).
//
// The engine needs Linux's *at system calls; elsewhere Save and Rewind
// return an error.
package checkpoint
