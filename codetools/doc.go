// Package codetools provides the tools every coding agent needs — read_file,
// write_file, edit_file, multi_edit, append_to_file, bash, grep, glob,
// list_directory, tree, file_info and http_get — behind one
// [llmtoolkit.Resolver], confined to a root folder.
//
// Every path is resolved inside the root through [os.Root], so neither ".."
// nor a symbolic link can reach outside it. Every output is capped, every
// subprocess is killed with its children on timeout, and edits follow exact,
// predictable rules that never corrupt a file.
//
// # Names in answers
//
// Every listing (grep, glob, list_directory, tree, file_info, and the paths
// of the Display payloads) shows a name or path by one rule: as it is when
// it is plain text; as a Go double-quoted string (strconv.Quote) when it
// holds a line break or another control character, a character that does
// not print (such as U+202E), invalid UTF-8, or a part that starts with a
// double quote. So a file named "x.txt\nsecrets/prod.env:1: ..." is shown
// on one line, quoted, and cannot forge a line of the answer. Every path
// argument reads the rule back: the whole path, or any part of it between
// slashes, written as such a quoted string is unquoted, so a name shown
// can be passed as a path and opens the file it names.
//
// Beside its text, each tool that has something to show attaches an
// [llmtoolkit.Display] for hosts, with a payload of a documented type
// ([FilePayload], [DiffPayload], [ProcessPayload], [MatchesPayload],
// [FilesPayload], [WebpagePayload], [PatchPayload], [ShellPayload],
// [JobPayload]) whose JSON keys are camelCase; a host
// renders it with a type switch, and [DecodeDisplay] types one read back
// from JSON.
//
// # apply_patch
//
// WithApplyPatch adds a 13th tool, apply_patch, off by default (the default set
// stays the 12 tools every host has): a patch in the V4A format OpenAI's models
// write, which adds, deletes, updates and moves several files at once, all or
// nothing (internal/patch: the whole patch worked out in memory, then written
// atomically file by file, undone on a failure). Its definition declares every
// file a patch touches (llmtoolkit.PathArguments.Lists), each path canonical as
// the tool opens it and a move both its paths, so a permission layer decides on
// each; the answer lists each file by its real path (A, M, R old -> new, D) with
// the diffs, and the Display is a PatchPayload with one diff per file.
//
// WithTextEditor adds Anthropic's text editor under its own name,
// str_replace_based_edit_tool, taking its documented input (command view,
// str_replace, create, insert) over the same engines: view numbers a file's
// lines ("N: ") within view_range and lists a folder two levels deep (tree),
// str_replace is edit_file's match refused with Anthropic's texts ("Error:
// Found N matches for replacement text. Please provide more context to make a
// unique match."), create is write_file, insert keeps the line endings. Its
// definition's Native ("anthropic/text_editor_20250728", NativeTextEditor)
// makes package provider declare it to Anthropic as the built-in tool; other
// providers see an ordinary function under the same name, so the audit trail
// has one name whatever shape the model saw. WithMemory adds Anthropic's
// memory tool (memory, Native "anthropic/memory_20250818") over the same
// commands plus delete and rename, every path under /memories mapped into
// one folder of the root and refused when its canonical path leaves it.
//
// WithBashSession makes bash Anthropic's bash_20250124 (Native NativeBash,
// input command or restart): one persistent shell per session, run as a
// background job (the sandbox, containment, lifetime), so a command's cd,
// exports and functions carry to the next; each command is evaluated in it
// with an empty input and ends with a random marker and its exit code (and
// a marker of its own on the shell's standard error, a pipe apart), its
// stdout shown, then its stderr after "stderr:", each capped and spilled
// as bash's output; a command past bash's timeout is
// killed with the shell, and the next answer says the state is gone.
// WithModelTools for Claude turns it on.
//
// WithShell adds the Responses API's shell tool, shell: a call's commands run
// one after the other on bash's engine (the sandbox, containment, output caps
// and spill files), stdout and stderr apart, and the answer is the JSON of a
// shell_call_output's entries (stdout, stderr, outcome exit code or timeout
// per command; a timeout ends the call). Its commands are declared
// (llmtoolkit.CommandArguments.Lists), so a permission layer checks each as
// bash's command. WithModelTools for the GPT-5 family adds apply_patch and
// shell with Native NativeApplyPatch and NativeShell: package provider
// declares them to the Responses API as {"type": "apply_patch"} and {"type":
// "shell"}, reads an apply_patch_call's one-file operation as an apply_patch
// call of the same V4A patch (the same path decisions, all or nothing) and
// answers in apply_patch_call_output and shell_call_output items.
//
// # Display payloads
//
// Each kind has one exported payload type, with a doc comment on every
// field, set as a value (never a pointer), so a host renders with a type
// switch on llmtoolkit.Display.Payload (Example_displayTypeSwitch). One key
// style everywhere: camelCase, as the tools' arguments (oldText, ignoreCase)
// and MCP; every key is always present (no omitempty).
//
//	kind      tool                              type                 JSON keys
//	file      read_file                         FilePayload          path, content, startLine, endLine, totalLines, truncated
//	diff      edit_file, multi_edit,            DiffPayload          path, diff, truncated, added, removed, countsBounded,
//	          write_file (replacing a file)                          firstChangedLine, replacements, diagnostics
//	diagnostics  write_file (a new file),       DiagnosticsPayload   path, server, errors, warnings, items (each Diagnostic:
//	          append_to_file, with language                          path, line, column, severity, code, source, message),
//	          servers on                                             truncated, note
//	process   bash                              ProcessPayload       command, exitCode, output, outputBytes, durationMs,
//	                                                                 timedOut, outputFile, outputFileCut, sandbox
//	matches   grep                              MatchesPayload       pattern, total, shown, items (each Match: path, line, text)
//	files     glob                              FilesPayload         pattern, total, shown, paths
//	webpage   http_get                          WebpagePayload       url, status, contentType, truncated
//	patch     apply_patch (WithApplyPatch)      PatchPayload         files (each PatchFile: operation, path, movedFrom, diff,
//	                                                                 truncated, added, removed), omitted
//	shell     shell (WithShell)                 ShellPayload         commands (each a ProcessPayload)
//	memory    memory (WithMemory)               MemoryPayload        command, path, file, newPath, newFile, diff, truncated,
//	                                                                 added, removed
//	job       bash run_in_background, job_output,  JobPayload       event (start, read, write, stop), jobId, command,
//	          job_kill, exec_command, write_stdin                    terminal, tty, state, exitCode, reason, output, screen,
//	                                                                 outputBytes, durationMs, logFile, logFileCut, sandbox
//	todos     todo_write (package agent)        agent.TodosPayload   todos (each agent.Todo: id, content, status)
//	subagent  spawn_agent (package agent)       agent.SubAgentPayload
//	                                                                 id, description, iterations, toolCalls, durationMs,
//	                                                                 usage (inputTokens, outputTokens, ...), costUsd, ...,
//	                                                                 error, isolation, workspace, branch, files, diff,
//	                                                                 diffTruncated, patchFile, outcome, conflicts
//
// glob keeps its own kind, files, rather than joining matches: it finds
// paths, with neither line nor text. replacements is 1 for edit_file, the
// number of edits for multi_edit, 0 for write_file; added/removed are a
// minimal diff's counts (as diff -u gives them) even when the shown diff is
// cut or, past 2,000 edits, not minimal (countsBounded marks the rare upper
// bound); total/shown are what was found and what the model was shown. Sizes
// are bounded: the diff is capped at 64 KiB, content, output and the items
// are what the model was shown, never more. TestDisplayKeysAreDocumented
// (display_test.go) derives the keys from the struct tags and compares them
// with a literal copy of this table: a rename fails it until the docs follow;
// agent's TestDisplayKeys does the same for the agent kinds.
//
// Over MCP the server sends the Display in the result's _meta under
// io.llmtoolkit/display (mcp.DisplayMetaKey) with the same keys, and no
// structuredContent (mcp/display_test.go compares it with the local
// Display's JSON for every kind); a payload too large is cut by the server on
// its decoded JSON, keys kept. The MCP client knows no tool's types: the
// payload it shows is the decoded JSON (map[string]any), and [DecodeDisplay]
// turns a built-in kind back into its type (package mcp does not import
// codetools).
//
// # Images and documents
//
// read_file and http_get recognise PNG, JPEG, GIF, WebP and PDF by their
// first bytes (never by the file's extension or the Content-Type: a .png
// holding text is read as text, an image named .txt is an image; SVG is
// text; any other body is text or binary by its content, as read_file
// decides, so an HTML page served as image/png is a page:
// TestHTTPGetTextByContent). Such a file is attached to the result whole,
// with [llmtoolkit.Attach] (an image part, or a file part named after the
// file for a PDF), and the model reads one line beside it: name, media type,
// size and, for an image, its pixel dimensions. No format is turned into
// pages as images: a PDF goes to the model as the document itself, which
// every format of package provider carries. Limits ([WithMediaLimits]):
// 5 MiB ([DefaultMediaMaxBytes]), refused from the file's size (or the
// Content-Length) before its bytes are read; 8000 x 8000 pixels
// ([DefaultMediaMaxPixels]), refused from the header (internal/media reads
// the dimensions without decoding: a header that claims 100,000 x 100,000
// costs nothing); a file cut short or with a bad header is refused
// ([ErrMalformedMedia]). A PDF is not parsed: a PDF bomb costs its bytes.
// read_file opens the file through the same confined open as text (a link
// out of the root is refused before any byte is read) and reads it into one
// buffer of its size: the only copy it makes.
//
// # Background jobs and terminals
//
// Opt-in, so that New gives the 12 tools above unless asked:
// [WithBackgroundJobs] gives bash a run_in_background argument and adds
// job_output, job_list and job_kill (crush's names; Claude Code calls them
// BashOutput/TaskOutput and KillShell/TaskStop); [WithBashAutoBackground]
// keeps a command still running after a delay as a job instead of killing
// it at its timeout. A job's command runs as a one-shot bash call's does
// (same shell, environment, sandbox and containment); the engine is
// internal/jobs. Its output is kept in a ring in memory
// ([JobLimits].MemoryPerJob) from which job_output returns what was not
// read yet (waiting up to wait_seconds for more, or with until_exit for the
// end), and in a log file, one of bash's spill files (capped by
// [WithBashSpillLimit], kept under [WithBashSpillRetention]), that the
// answer names. Jobs belong to the session, run and agent that started
// them (the session map's tenant_id and conversation_id,
// llmtoolkit.Scope.RunID, llmtoolkit.Scope.AgentID): another's job id is
// answered as unknown ([ErrNoJob]), and an id these tools never gave as
// lost ([ErrJobLost]: jobs do not survive their process, so a durable run
// resumed after a crash is told at once that its job is gone, never made to
// wait for it). Job and session ids are never given twice in a process
// (whatever the number of CodeTools) and start at a random point of a
// range of 8 million (4 to 7 digits), so that an id from before a
// restart or from another process names none of this one's jobs (it is
// lost), save by a chance of about (jobs of both) in 8 million: a kept id
// never reaches another job's output. bash and exec_command declare their
// commands and write_stdin the lines it types (llmtoolkit.Tool.Commands),
// and exec_command its workdir as a path, so package agent checks them as
// bash's commands. A job ends, with every process it
// started (a daemon it forked included), when its command ends, on
// job_kill, after [JobLimits].MaxLifetime, at [CodeTools.Close], when the
// sub-agent that started it ends (agent's spawn_agent says so on the
// context), and, where
// commands are contained, with the host process even when it is SIGKILLed.
// More than [JobLimits].MaxJobs running is refused ([ErrTooManyJobs]).
// Served over MCP with bash of mcp.TaskOnDemand support, a background
// command of a client that runs tasks goes on as an MCP task instead of a
// job: the task runs it to its end (its answer the task's result, its
// lifetime bounded as a job's), and tasks/cancel kills it with every process
// it started; other clients get a job (TestBackgroundJobAsTask). So with
// exec_command of TaskOnDemand support: a command without a terminal goes
// on as a task that runs it to its end, with an empty input (the task's
// client holds no session ID to type with), answered as an ended command
// ("Process exited with code N"); one with tty stays a session, since a
// terminal is there to be typed into with write_stdin, and MCP tasks
// cannot carry keys (TestExecCommandAsTask).
//
// [WithTerminals] adds exec_command and write_stdin, named and shaped as
// Codex's (cmd, workdir, tty, yield_time_ms, max_output_tokens;
// session_id, chars), so that models trained on them use them unprompted.
// exec_command answers with the wall time, "Process exited with code N" or
// "Process running with session ID N", and the output; write_stdin types
// into the session (Ctrl-C is "\u0003") and answers the same way. A
// session is a job of the same table, on a pseudo-terminal with tty
// (creack/pty; the command is its foreground process group, so Ctrl-C
// reaches it and not the sandbox's init) or on pipes. Output on a terminal
// reaches the model without escape sequences; a full-screen program (the
// alternate screen: less, vi, top) is answered with its screen as text,
// kept by a terminal emulator (charmbracelet/x/vt). A session neither read
// nor written for [JobLimits].IdleTimeout is ended.
//
// # Language servers
//
// [WithLanguageServers] (off by default: without it no answer changes)
// runs language servers from a catalog ([DefaultLanguageServers]: gopls,
// pyright, typescript-language-server, rust-analyzer, clangd; a host adds
// or replaces entries) through internal/lsp: one per language and project
// root, started when a file of its language is first touched, restarted
// once after a crash, stopped at Close (killed with its process group
// when it ignores shutdown). A server whose program is missing is logged
// once ([WithLanguageServerLogger]) and its files get no diagnostics,
// never an error.
//
// After write_file, edit_file, multi_edit, append_to_file, apply_patch
// and str_replace_based_edit_tool change a file a server handles, the server is told (didOpen, then didChange and
// didSave) and the tool waits, at most [LanguageServerLimits.Settle]
// (start included), for the diagnostics published for that change; the
// file's errors and warnings are appended to the answer, errors first, at
// most MaxShown, each as PATH:LINE:COLUMN: SEVERITY [CODE]: MESSAGE
// (columns in bytes), or "SERVER reports no errors or warnings in PATH".
// When the server is still starting, did not publish in time or stopped,
// the answer says so in a note and the edit stands. The same diagnostics
// are the Display's (DiffPayload.Diagnostics, or a "diagnostics" Display)
// and, being in the answer, in the trace row. [WithoutDiagnostics] turns
// them off for the tools it names.
//
// bash (run to its end, WithBashAutoBackground's first part, or in an
// MCP task) finds the files its command changed exactly: the
// tree's stat index (internal/snapshot, as checkpoints scan it:
// .gitignore honoured, only files whose stat moved read) before and after
// the command, a file counting when its content hash differs. Each
// changed file a server handles (at most 20) is told as an edit's is,
// and its diagnostics follow the output, within one settle time for all.
// A background job's index is taken when it starts (or when
// auto-background makes it a job) and again when it ends, whose changed
// files are told to their servers then; job_output and job_kill scan
// again while it runs and append the diagnostics of the files changed
// since the last report (at most 20, once each, the starting and the
// reading call's excluded paths left out). The scans run only with
// servers on; WithoutDiagnostics("bash") skips them, for jobs too.
//
// The option also adds six tools: diagnostics (a file, or everything the
// running servers reported), definition, references, hover, symbols (a
// file's, or the workspace's matching a query) and rename. A position is
// a line and either the symbol's name on it or a byte column. Locations
// outside the root (the standard library, a module cache) are listed as
// read-only references, never opened; those in paths the host excludes
// (llmtoolkit.Scope.ExcludedPaths, as agent's deny rules set them) are left
// out and counted. rename is one all-or-nothing edit: every file the
// server's edit names must be inside the root, not excluded, and a text
// file within the edit size, each confined, locked (in path order) and
// loaded as multi_edit does, its new text computed, before any is written;
// a failed write puts back those already written. It is annotated
// destructive (plan mode refuses it; the others are read-only). A
// permission layer checks its path argument, and each other file it
// edits is asked as multi_edit's call on it would be (internal/writecheck:
// one refusal refuses the whole rename).
//
// The servers run in the sandbox (internal/sandbox), each command its
// own: bash's backend under WithSandbox, else the strongest this machine
// runs (bubblewrap, then Landlock), in read-only mode without network
// whatever bash's mode. Where no backend runs, no server starts
// unless the host opts in with WithUnconfinedLanguageServers (then they
// run as the host's user): one line is logged, once, and each change's
// answer says why it has no diagnostics; the change itself succeeds. A server reads the system folders, the root, its
// program's folder (the npm install holding it), the host's GOROOT and
// module cache, WithSandbox's Readable and its LanguageServer.Readable,
// and writes only a private home, cache (GOCACHE, XDG_CACHE_HOME) and
// TMPDIR kept until Close: never the host's caches, which may hold what
// an unconfined build read. What the calls exclude or hide
// (llmtoolkit.Scope.ExcludedPaths and HiddenPaths: agent's guard hands
// every call the globs of all its deny rules) and what a permission
// layer's read check refuses (llmtoolkit.WithReadCheck; agent's guard
// hands every call one: read_file's check on the path, whatever the
// rule's spelling, regexps, hooks and the callback included; a host's own
// layer hands its own) is hidden from it, by one decision
// asked of every path of the tree at a server's start: every glob and
// every layer's check a call has carried is kept, and a call bringing a
// new one that refuses a path some running server's view does not cover
// restarts the running servers (one that refuses nothing more, as a
// sub-agent's guard often does, does not), whose views then cover each
// refused folder with an empty tmpfs and each refused file (and, while
// anything is checked, every file with more than one name) with an empty
// one; the server process
// cannot open them (TestServerProcessCannotOpenExcludedFiles), and gopls
// reports the package it cannot load (TestGoplsNeverSeesExcludedFiles).
// A file refused so that bash, a job or a write tool creates later,
// outside a hidden folder (in a folder .gitignore ignores too: a watch of
// every folder's names, read again only where a folder's stat moved, runs
// at every call that reaches a server, before the server is told
// anything), restarts the servers, and so does a covered path that is
// no longer the file it was (replaced under its name, as an editor's save
// or mv does: the kernel drops the cover of an unlinked file), checked at
// every call that reaches the servers; past 4,096 paths to hide, or with globs
// and no backend, the server is not started and its files get a note
// (errServersUnconfined). A server's memory limit is a memory cgroup of
// its own, holding the sandbox, the server and all it starts, where this
// process may make one (cgroup v2 or a v1 memory hierarchy); else, logged
// once, RLIMIT_AS set by the shell that execs it inside the sandbox, each
// process's own address space (LanguageServerLimits.MemoryBytes). A
// restart keeps the server's home and caches: gopls on this repository
// took 35.4 s to its first diagnostics at its first start and 4.8 s after
// a restart (median of 3, load 16; BenchmarkGoplsRestart).
//
// # What the tools withstand
//
// Each tool validates its own arguments again (it may be called without
// llmtoolkit.Execute), confines every path to its root with os.Root, and
// opens user-named paths without blocking (internal/confine: O_NONBLOCK, the
// type checked on the opened descriptor). The engines' own promises are in
// their package docs: internal/search (grep), internal/walk (walks and ignore
// files), internal/confine (opening, the canonical path), internal/proc
// (bash's processes and spill files), internal/textedit (edits and diffs),
// internal/web (http_get's guard and conversion), internal/sandbox (bash's
// OS sandbox). At the tools' level:
//
//   - No write through a hard link: append_to_file, the one in-place write,
//     refuses a file with more than one link, checked on the opened
//     descriptor; the other write tools replace the name
//     (TestAppendToFileRefusesHardLinks). While a host's deny rules are in
//     force (llmtoolkit.Scope.ExcludedPaths, as agent's guard sets them),
//     no read either: read_file, grep, edit_file and multi_edit refuse a
//     file with more than one name, one check on the opened descriptor
//     (its other names may be denied), grep over a folder leaves it out
//     with a note, and file_info shows its link count ("links: N") without
//     reading it (agent's TestHardLinkToDeniedFile).
//   - Writes are atomic and leave nothing behind: internal/atomicfile writes a
//     short-named temporary file through one handle on the target's folder and
//     removes it on every error (TestWriteFolderSwapLeavesNoTemporaryFile,
//     TestWriteToolsLongNames); a path that names a folder (a/) is refused
//     (TestWritePathNamingAFolderRefused).
//   - Deadlines are honoured inside files: read_file's reader checks the
//     context before every 64 KiB read (TestReadFileSparseTailHonoursDeadline).
//   - Names cannot forge answers (see "Names in answers";
//     TestListingsCannotBeForgedByNames, FuzzShownNameRoundTrip).
//   - bash's sandbox ([WithSandbox], internal/sandbox) is asked for by
//     policy; [WithSandboxRequired] makes New fail instead of running
//     unsandboxed, and the Display's sandbox names what ran (backend, mode,
//     network, "as nobody" when the host is root). Commands start
//     from a minimal environment ([WithBashInheritEnv] for more;
//     secret-looking names only by name; TestBashEnvironment).
//   - A sandboxed command holds no capability and, when the host is root,
//     runs as nobody: it cannot remount a folder writable nor read
//     /etc/shadow, and still writes the root (TestSandboxHoldsNoPrivilege);
//     chmod, chown and touch outside the writable folders fail
//     (TestSandboxRefusesMetadataWrites); only descriptors 0-2 reach it
//     (TestSandboxInheritsNoDescriptor); the socket filter holds under
//     bubblewrap too: no vsock, no Internet family without the network
//     (TestSandboxRefusesSocketFamilies); no setuid or setgid file or
//     folder is left where it writes, whatever the call (chmod, fchmodat2,
//     open with O_CREAT or O_TMPFILE, mknod; TestSandboxRefusesSetuidFiles,
//     TestSandboxModeBitsEverySyscall, TestSandboxSetgidFolders).
//   - In every mode bash runs under a minimal init that forwards signals,
//     reaps and dies with the host: `kill -9 $$` ends the script with 137
//     (TestBashShellSignalEndsScript, TestSandboxInitForwardsSignals,
//     TestSandboxDiesWithHost).
//   - Each sandboxed call has a TMPDIR of its own, removed after it; the
//     spill files stay out of the commands' sight (TestBashTmpdirPerCall).
//   - The sandbox's Network switch governs http_get too: closed, it refuses
//     with [ErrNetworkClosed] (TestHTTPGetFollowsSandboxNetwork).
//   - [SandboxPolicy].AllowHosts opens a closed network to named hosts,
//     for bash and http_get by one list: commands reach them through an
//     HTTP proxy the host runs (internal/web's Proxy, served in the
//     command's loopback-only namespace by internal/sandbox), which decides
//     on one canonical name, resolves it itself, refuses IP addresses in
//     any spelling and non-public targets, holds 64 connections at once,
//     and writes each refusal (403) to the command's output; http_get dials
//     through the same Dialer and fails with [ErrHostNotAllowed]
//     (TestSandboxAllowHosts; internal/sandbox's TestProxyAllowList, both
//     backends, per call and in a session; internal/web's
//     FuzzHostCheckVersusDial: the name resolved is the name checked).
//   - grep's and glob's answers are capped at the same 50 KiB
//     ([WithGrepMaxBytes]), whatever limit asks for; the answer says where it
//     was cut and the Display lists exactly the lines or paths shown
//     (TestGrepAnswerAndDisplayAgree, TestGlobAnswerIsCapped).
//   - Every goroutine a tool starts recovers its panics into the call's
//     error.
//   - Deny globs handed to a tool (agent's guard, llmtoolkit.Scope.ExcludedPaths) are
//     folders grep, glob, tree and list_directory leave out, never open, and
//     name at the end of their answer. They are matched on canonical paths:
//     a folder reached through a link inside the root, in a path argument
//     or in the fixed folders that start glob's pattern ("pub/dirlink/**"),
//     is the folder it leads to, and glob lists it under that name, as the
//     other three do (agent's TestRecursiveToolsAgreeThroughLinks).
package codetools
