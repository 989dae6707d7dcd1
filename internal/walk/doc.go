// Package walk is the walker behind codetools' grep, glob and tree, and
// the reader of the .gitignore files they honour (internal/gitignore is the
// matcher).
//
// # Folder handles
//
// A walk never opens a path from the root: every folder is a [Dir], opened
// from its parent's handle with one confined step of its own name, so a
// file or folder costs one step however deep it lies, and a link swapped in
// above it cannot move it. On Linux a Dir is a raw descriptor: openat with
// O_NOFOLLOW of a single name is confined by construction and skips the
// bookkeeping of *os.File (poller registration, fcntl, fstat) that costs
// more than the read itself for small files; it is listed with getdents(2)
// on that descriptor, and a file opened from it reports its end without a
// last read once it was read up to the size its fstat gave. Elsewhere a Dir is an
// [os.Root] opened below its parent. Every open is non-blocking where the
// system allows it (a named pipe swapped in after the listing returns at
// once) and its type is checked on the opened descriptor: O_DIRECTORY for
// folders, fstat for files. On the Unix systems other than Linux,
// os.Root.OpenRoot opens a folder without O_NONBLOCK, so a pipe renamed
// over a subfolder between the Lstat and the open can still block there;
// Windows has no named pipes in folders.
//
// # The parallel walk
//
// [Walker.Walk] visits every regular file below a folder from [Workers]
// goroutines, which share a LIFO of pending folders and files; an open
// folder is shared by the items listed in it and closed by the last one to
// finish. It always skips .git folders, never follows symbolic links, never
// opens devices, sockets or pipes, and never opens a folder that the
// host's exclusions or a .gitignore leave out. Folders below the start that
// cannot be read are skipped; the start itself must open. The goroutines
// run through [Walker.Go], the caller's guard: a panic (in the visitor too)
// stops the walk and comes back as its error, after every worker has
// stopped and every folder is closed.
//
// # Folder stacks
//
// tree walks depth first with a [Stack]: a folder needs its handle until
// its last subfolder is opened, so a chain of folders holds two at most; a
// tree whose folders all still have subfolders to visit would hold one per
// level, so past [Stack.Limit] the shallowest handles are closed and
// reopened, one confined step per level, when the walk comes back to them.
//
// # Ignore files
//
// A .gitignore is a file of the tree, so as hostile as any other. It is
// read only when it is a regular file, checked on the opened descriptor; it
// is opened without blocking, so a named pipe cannot stall a walk; it is
// never read through a symbolic link, which git refuses too (since git
// 2.32), in every walk alike; and at most [MaxIgnoreFileBytes] of it are
// read (the whole lines of that prefix), so that a sparse or endless file
// costs no more than that. A file that is skipped, or read in part, is
// logged through log/slog and the walk goes on without it, as git goes on
// past an ignore file it cannot read. The rules of the folders above a
// walk's start apply too ([IgnoreAbove]): they are read going down one
// folder handle at a time, so the work is linear in the start's depth.
package walk
