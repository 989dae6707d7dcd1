package codetools

import (
	"encoding/json"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
)

// The kinds of [llmtoolkit.Display] the tools show, and the payload type
// each carries. A tool sets its payload as a value (never a pointer), so a
// host renders a result with a type switch on [llmtoolkit.Display.Payload]:
//
//	switch p := res.Display.Payload.(type) {
//	case codetools.DiffPayload:
//		render(p.Diff)
//	case codetools.ProcessPayload:
//		...
//	}
//
// Every payload encodes to JSON with camelCase keys (the style of the tools'
// arguments and of MCP), every key always present. Sizes are bounded: a
// diff, never whole files; at most the matches and the output the model was
// shown.
const (
	// DisplayFile is read_file's Display: a [FilePayload].
	DisplayFile = "file"
	// DisplayDiff is the Display of edit_file, multi_edit and write_file
	// (when it replaces a file): a [DiffPayload].
	DisplayDiff = "diff"
	// DisplayProcess is bash's Display: a [ProcessPayload].
	DisplayProcess = "process"
	// DisplayMatches is grep's Display: a [MatchesPayload].
	DisplayMatches = "matches"
	// DisplayFiles is glob's Display: a [FilesPayload]. It is not
	// "matches": glob finds paths, with neither line nor text, so it has
	// its own shape.
	DisplayFiles = "files"
	// DisplayWebpage is http_get's Display: a [WebpagePayload].
	DisplayWebpage = "webpage"
	// DisplayPatch is apply_patch's Display: a [PatchPayload], one diff
	// per file.
	DisplayPatch = "patch"
	// DisplayDiagnostics is the Display of the diagnostics tool, and of
	// write_file (creating a file) and append_to_file with language
	// servers on ([WithLanguageServers]): a [DiagnosticsPayload]. The
	// edits that show a diff carry it in [DiffPayload.Diagnostics].
	DisplayDiagnostics = "diagnostics"
	// DisplayMemory is the memory tool's Display ([WithMemory]): a
	// [MemoryPayload], the command with the real file behind its
	// /memories path and, for an edit, the diff.
	DisplayMemory = "memory"
	// DisplayShell is the shell tool's Display ([WithShell]): a
	// [ShellPayload], one [ProcessPayload] per command run. Each command
	// is also shown alone, as a "process" Display, when it ends.
	DisplayShell = "shell"
	// DisplayJob is the Display of the calls on a background job or a
	// terminal session: bash's run_in_background (and a command kept as
	// a job by [WithBashAutoBackground]), job_output, job_kill,
	// exec_command and write_stdin: a [JobPayload].
	DisplayJob = "job"
)

// The events of a [JobPayload].
const (
	JobStarted = "start" // bash in the background, exec_command
	JobRead    = "read"  // job_output, write_stdin without chars
	JobWritten = "write" // write_stdin with chars
	JobStopped = "stop"  // job_kill
)

// JobPayload is the payload of a "job" Display: one call on a background
// job or a terminal session, and the job's state after it.
type JobPayload struct {
	// Event is what the call did: [JobStarted], [JobRead], [JobWritten]
	// or [JobStopped].
	Event string `json:"event"`
	// JobID is the job's id (job_output's job_id, write_stdin's
	// session_id).
	JobID int `json:"jobId"`
	// Command is the command as given (exec_command's with its workdir's
	// cd).
	Command string `json:"command"`
	// Terminal reports an exec_command session: write_stdin types into
	// it; TTY that it runs on a pseudo-terminal.
	Terminal bool `json:"terminal"`
	TTY      bool `json:"tty"`
	// State is "running", "exited" or "killed".
	State string `json:"state"`
	// ExitCode is the exit code once ended (128+N for a death by signal
	// N, -1 unknown); 0 while running.
	ExitCode int `json:"exitCode"`
	// Reason says why a killed job was killed ("stopped", "closed", the
	// lifetime or idle bound).
	Reason string `json:"reason"`
	// Output is the new output the model was shown by this call (its
	// tail, or its middle cut, with the tool's notes), escape sequences
	// removed.
	Output string `json:"output"`
	// Screen reports that Output is a full-screen program's screen, as
	// text.
	Screen bool `json:"screen"`
	// OutputBytes is the size of the job's whole output so far.
	OutputBytes int64 `json:"outputBytes"`
	// DurationMS is how long the job has run (so far), in milliseconds.
	DurationMS int64 `json:"durationMs"`
	// LogFile is the host path of the file holding the job's whole
	// output ("" when none could be made); LogFileCut reports it lost
	// its middle.
	LogFile    string `json:"logFile"`
	LogFileCut bool   `json:"logFileCut"`
	// Sandbox says where the job runs, as [ProcessPayload].Sandbox.
	Sandbox string `json:"sandbox"`
}

// MemoryPayload is the payload of a "memory" Display: one command of the
// memory tool and the real files it touched.
type MemoryPayload struct {
	// Command is the command: view, create, str_replace, insert, delete
	// or rename.
	Command string `json:"command"`
	// Path is the path as the model gave it (/memories/...), rename's
	// old_path; File is the real file, relative to the root (inside the
	// memory folder), shown by the package's rule for names.
	Path string `json:"path"`
	File string `json:"file"`
	// NewPath and NewFile are rename's new_path and its real file; ""
	// otherwise.
	NewPath string `json:"newPath"`
	NewFile string `json:"newFile"`
	// Diff is the change an edit made (create replacing a file,
	// str_replace, insert), capped as [DiffPayload.Diff]; Truncated
	// reports it was cut; Added and Removed count its lines.
	Diff      string `json:"diff"`
	Truncated bool   `json:"truncated"`
	Added     int    `json:"added"`
	Removed   int    `json:"removed"`
}

// ShellPayload is the payload of a "shell" Display: the commands of one
// shell call that ran, in order (a timeout ends the call).
type ShellPayload struct {
	// Commands are the commands run, each as bash's Display shows one
	// (Output: its stdout, then its stderr).
	Commands []ProcessPayload `json:"commands"`
}

// PatchPayload is the payload of a "patch" Display: what apply_patch did
// to each file, in the patch's order.
type PatchPayload struct {
	// Files are the files changed, at most 50 (the others are counted in
	// Omitted).
	Files []PatchFile `json:"files"`
	// Omitted is the number of operations past the first 50, not shown.
	Omitted int `json:"omitted"`
}

// PatchFile is one file of a [PatchPayload].
type PatchFile struct {
	// Operation is "add", "update", "move" (an update that renamed the
	// file) or "delete".
	Operation string `json:"operation"`
	// Path is the file's path relative to the root (the new one for a
	// move), shown by the package's rule for names.
	Path string `json:"path"`
	// MovedFrom is a moved file's old path; "" otherwise.
	MovedFrom string `json:"movedFrom"`
	// Diff is the file's unified diff, capped as [DiffPayload.Diff] is.
	Diff string `json:"diff"`
	// Truncated reports that Diff was cut.
	Truncated bool `json:"truncated"`
	// Added and Removed count the lines added and removed.
	Added   int `json:"added"`
	Removed int `json:"removed"`
}

// FilePayload is the payload of a "file" Display: the lines read_file
// showed.
type FilePayload struct {
	// Path is the file's path relative to the root, with forward slashes,
	// shown by the package's rule for names (quoted when it holds a control
	// character: see "Names in answers" in the package doc).
	Path string `json:"path"`
	// Content is the lines shown, as the model read them, without line
	// numbers or read_file's closing notice. It is capped as the model's
	// answer is (the tool's line and byte limits).
	Content string `json:"content"`
	// StartLine is the first line shown, 1-based.
	StartLine int `json:"startLine"`
	// EndLine is the last line shown; StartLine-1 when no line is (an
	// empty file).
	EndLine int `json:"endLine"`
	// TotalLines is the number of lines in the file.
	TotalLines int `json:"totalLines"`
	// Truncated reports that the file holds more than Content: lines after
	// EndLine, or the rest of a line too long to show whole.
	Truncated bool `json:"truncated"`
}

// DiffPayload is the payload of a "diff" Display: the change an edit made.
// It never holds the whole texts.
type DiffPayload struct {
	// Path is the file's path relative to the root, with forward slashes,
	// shown by the package's rule for names (quoted when it holds a control
	// character: see "Names in answers" in the package doc).
	Path string `json:"path"`
	// Diff is a unified diff (as diff -u prints it, lines without their
	// line endings) of at most 64 KiB: past that it is cut and ends with a
	// line saying so.
	Diff string `json:"diff"`
	// Truncated reports that Diff was cut.
	Truncated bool `json:"truncated"`
	// Added is the number of lines added.
	Added int `json:"added"`
	// Removed is the number of lines removed.
	Removed int `json:"removed"`
	// CountsBounded reports that Added and Removed are not minimal. They
	// are the counts of a minimal diff (what diff -u and git diff --stat
	// give), also when Diff itself is not minimal (past 2,000 edits it
	// shows the changed part removed then added) or is cut, unless finding
	// them would take too long (tens of thousands of changed lines, most
	// of them shared): then they are upper bounds and CountsBounded is
	// true.
	CountsBounded bool `json:"countsBounded"`
	// FirstChangedLine is the first changed line of the new text, 1-based
	// (1 when only line endings changed).
	FirstChangedLine int `json:"firstChangedLine"`
	// Replacements is the number of replacements made: 1 for edit_file,
	// the number of edits applied for multi_edit, 0 for write_file (which
	// replaces the whole file).
	Replacements int `json:"replacements"`
	// Diagnostics are the errors and warnings the file's language server
	// reported after the change; nil without language servers
	// ([WithLanguageServers]), for a file no server handles, or for a tool
	// [WithoutDiagnostics] names.
	Diagnostics *DiagnosticsPayload `json:"diagnostics"`
}

// DiagnosticsPayload is the payload of a "diagnostics" Display, and
// [DiffPayload.Diagnostics]: what language servers reported.
type DiagnosticsPayload struct {
	// Path is the file's path relative to the root, shown by the
	// package's rule for names; "" for the whole workspace.
	Path string `json:"path"`
	// Server names the server that answered ("gopls"); "" when none did.
	Server string `json:"server"`
	// Errors and Warnings count what the server reported (all of it, not
	// only the items shown).
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	// Items are the diagnostics the model was shown: errors first, then
	// warnings, each in line order, at most the limit
	// ([LanguageServerLimits.MaxShown]).
	Items []Diagnostic `json:"items"`
	// Truncated reports that more were reported than Items holds.
	Truncated bool `json:"truncated"`
	// Note says why the diagnostics may be stale or missing: the server
	// is still starting, did not answer within the settle time, or
	// stopped. "" when they were published for this change.
	Note string `json:"note"`
}

// Diagnostic is one error or warning in a [DiagnosticsPayload].
type Diagnostic struct {
	// Path is the file's path relative to the root, shown by the
	// package's rule for names.
	Path string `json:"path"`
	// Line and Column are where it starts, 1-based; Column counts bytes,
	// as compilers do.
	Line   int `json:"line"`
	Column int `json:"column"`
	// Severity is "error" or "warning".
	Severity string `json:"severity"`
	// Code is the server's code for it ("" when it gives none).
	Code string `json:"code"`
	// Source is what produced it ("compiler", "Pyright", "ts").
	Source string `json:"source"`
	// Message is the server's message on one line, cut when very long.
	Message string `json:"message"`
}

// ProcessPayload is the payload of a "process" Display: a command bash ran.
type ProcessPayload struct {
	// Command is the command as given.
	Command string `json:"command"`
	// ExitCode is the command's exit code: 128+N when signal N killed it
	// (a timeout does), -1 when it has none (it could not be waited for).
	ExitCode int `json:"exitCode"`
	// Output is the tail of the output (stdout and stderr merged; a bash
	// session's stdout, then its stderr after "stderr:"; shell's stdout,
	// then its stderr) the model was shown, with bash's notes on what was
	// left out.
	Output string `json:"output"`
	// OutputBytes is the size of the whole output, of which Output is the
	// tail.
	OutputBytes int64 `json:"outputBytes"`
	// DurationMS is how long the command ran, in milliseconds.
	DurationMS int64 `json:"durationMs"`
	// TimedOut reports that the command was killed at its timeout.
	TimedOut bool `json:"timedOut"`
	// OutputFile is the host path of the file holding the whole output,
	// when it was longer than the tail; "" otherwise. The file is removed
	// after a while (see [WithBashSpillDir] and [WithBashSpillRetention]).
	OutputFile string `json:"outputFile"`
	// OutputFileCut reports that the output was larger than the file
	// keeps: it holds the output's beginning and its end.
	OutputFileCut bool `json:"outputFileCut"`
	// Sandbox says where the command ran: "bubblewrap (workspace-write,
	// no network)", "landlock (...)", or "none" (see [WithSandbox]),
	// followed by "none: REASON" when a sandbox was asked for and could
	// not run, and by a note when processes could not be contained.
	Sandbox string `json:"sandbox"`
}

// MatchesPayload is the payload of a "matches" Display: the lines grep
// found.
type MatchesPayload struct {
	// Pattern is the regular expression searched for.
	Pattern string `json:"pattern"`
	// Total is the number of matching lines found.
	Total int `json:"total"`
	// Shown is the number of matches shown to the model (the limit and the
	// size of the answer bound it): the length of Items.
	Shown int `json:"shown"`
	// Items are the matches shown, in path then line order.
	Items []Match `json:"items"`
}

// Match is one matching line in a [MatchesPayload].
type Match struct {
	// Path is the file's path relative to the root, with forward slashes,
	// shown by the package's rule for names (quoted when it holds a control
	// character: see "Names in answers" in the package doc).
	Path string `json:"path"`
	// Line is the line's number, 1-based.
	Line int `json:"line"`
	// Text is the line, cut when very long.
	Text string `json:"text"`
}

// FilesPayload is the payload of a "files" Display: the paths glob found.
type FilesPayload struct {
	// Pattern is the glob pattern.
	Pattern string `json:"pattern"`
	// Total is the number of files found.
	Total int `json:"total"`
	// Shown is the number of paths listed (the limit bounds it): the
	// length of Paths.
	Shown int `json:"shown"`
	// Paths are the files listed, relative to the root with forward
	// slashes, newest first, shown by the package's rule for names.
	Paths []string `json:"paths"`
}

// WebpagePayload is the payload of a "webpage" Display: what http_get
// fetched.
type WebpagePayload struct {
	// URL is the final URL, after redirects, without its password.
	URL string `json:"url"`
	// Status is the HTTP status code.
	Status int `json:"status"`
	// ContentType is the media type of the body ("text/html"), without
	// parameters.
	ContentType string `json:"contentType"`
	// Truncated reports that the body or its text was cut to the size
	// limit, or that the body stopped before its end (the connection
	// closed early, or the timeout came while it arrived).
	Truncated bool `json:"truncated"`
}

// DecodeDisplay returns d with its payload as the Go type of its kind when
// d is one of the kinds above and its payload is not that type yet: the
// generic form it has after a trip through JSON, such as
// map[string]any from [llmtoolkit.Display] read back by an MCP client.
// Other kinds, and payloads already typed, are returned unchanged. It is
// an error when the payload does not decode into the kind's type.
//
// A Display the MCP server had to replace because it was too large
// decodes with only its truncated flag, where the type has one.
func DecodeDisplay(d llmtoolkit.Display) (llmtoolkit.Display, error) {
	var err error
	switch d.Kind {
	case DisplayFile:
		d.Payload, err = decodePayload[FilePayload](d.Payload)
	case DisplayDiff:
		d.Payload, err = decodePayload[DiffPayload](d.Payload)
	case DisplayProcess:
		d.Payload, err = decodePayload[ProcessPayload](d.Payload)
	case DisplayMatches:
		d.Payload, err = decodePayload[MatchesPayload](d.Payload)
	case DisplayFiles:
		d.Payload, err = decodePayload[FilesPayload](d.Payload)
	case DisplayWebpage:
		d.Payload, err = decodePayload[WebpagePayload](d.Payload)
	case DisplayShell:
		d.Payload, err = decodePayload[ShellPayload](d.Payload)
	case DisplayMemory:
		d.Payload, err = decodePayload[MemoryPayload](d.Payload)
	case DisplayPatch:
		d.Payload, err = decodePayload[PatchPayload](d.Payload)
	case DisplayDiagnostics:
		d.Payload, err = decodePayload[DiagnosticsPayload](d.Payload)
	case DisplayJob:
		d.Payload, err = decodePayload[JobPayload](d.Payload)
	}
	return d, err
}

// decodePayload turns v into a T through JSON, unless it is one already.
func decodePayload[T any](v any) (any, error) {
	switch v := v.(type) {
	case T:
		return v, nil
	case *T:
		if v != nil {
			return *v, nil
		}
	}
	var out T
	data, err := json.Marshal(v)
	if err != nil {
		return v, fmt.Errorf("codetools: encode the %T payload: %w", v, err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return v, fmt.Errorf("codetools: decode the payload as %T: %w", out, err)
	}
	return out, nil
}
