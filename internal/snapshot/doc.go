// Package snapshot is the engine of checkpoints: it records the tree under
// a root as content-addressed blobs and puts the root back as a recorded
// tree was.
//
// # Scans
//
// [Engine.Scan] walks the root and records every folder as a listing blob
// (names, kinds, permission bits, owners, modification times, sizes,
// content hashes, link targets;
// names are length-prefixed, so newlines and all are kept) and every file
// under [Options.MaxBlobBytes] as a blob of its content. The engine keeps
// a stat index of its last scan (size, mtime, ctime, inode, device, mode):
// a file whose stat has not moved is not read again, and a folder none of
// whose entries changed keeps the listing hash of the last scan (nothing
// encoded, hashed or asked of the store). A folder whose own stat has not
// moved is not listed again: its names are the last scan's (making,
// removing or renaming a name moves a folder's mtime and ctime, which
// git's untracked cache relies on too; the racy rule holds). So a scan
// costs an open and an lstat of every folder and an lstat of every entry,
// a listing (getdents, no *os.File) of the folders that moved, plus the
// reading of what changed. A [BatchBlobs] store is asked about and
// written the new blobs by batch (one query and one write per batch), all
// before the scan returns. A file whose times fall within [racyMargin] of
// the scan that saw it is read again by the next scan (git's racy-clean
// rule: a write in the same clock tick leaves the times as they were). Blobs go
// through the [Blobs] interface; one already held is not written again.
// [Engine.Files] stores nothing, so the Scan after it reads everything
// again; [Engine.Reset] asks the same when the last scan's blobs may be
// gone (its checkpoint was never saved).
//
// The walk is confined as internal/walk's: every folder is opened from its
// parent's descriptor with O_NOFOLLOW|O_DIRECTORY|O_NONBLOCK, so a symbolic
// link is recorded (its target as written) and never followed, in the root
// or out of it; pipes, sockets and devices are recorded by kind (and a
// device's number) and never opened. .git folders are skipped, .gitignore
// files honoured (read as internal/walk reads them: no link, no pipe,
// bounded) and the host's exclusions ([Options.Excluded]) never opened. A
// file over MaxBlobBytes is Huge: recorded by size and a hash of its data
// extents (holes are skipped, so a 5 GiB sparse file costs its data), at
// most [Options.MaxHashBytes] of them (past that, a hash of its
// identity), never stored. The number of entries and the nesting depth
// are bounded ([ErrTooLarge]).
//
// # Restores
//
// [Engine.Restore] scans the root (the state it replaces is stored, so a
// restore can be undone), lists the changes to the target ([Diff]: equal
// subtrees skipped by hash), asks the host about each before writing any,
// then removes (deepest first), creates and replaces (a temporary name
// renamed over the path: never half a file), and sets folder modes last.
// Every folder is reached from the root one name at a time with
// O_NOFOLLOW, so a link swapped in on the way is refused. What it cannot
// put back is listed in [Restored.Skipped]: Huge files, devices and
// sockets, folders that hold ignored files. Owners (where the process
// may set them: a refusal is Skipped) and modification times are
// restored, folders' last. A scan records which paths name one file
// ([Snapshot.Links], a blob beside the listings); a restore given them
// ([RestoreOptions.Links]) links those paths again and makes files
// linked since separate (without them, links are left as they are).
// Listings record owners and times since format 2; a listing of format 1
// (written before) is still read, and a restore to it leaves owners and
// times as they are. Linux only
// ([ErrUnsupported] elsewhere).
package snapshot
