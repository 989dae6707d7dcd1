package codetools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/jobs"
	"github.com/llmtoolkit/llmtoolkit/internal/lsp"
	"github.com/llmtoolkit/llmtoolkit/internal/proc"
)

// CodeTools is a [llmtoolkit.Resolver] over the built-in tools, confined to
// one root folder. It is safe for concurrent use. Build it with [New] and
// release it with [CodeTools.Close].
type CodeTools struct {
	dir       string   // absolute, cleaned root folder
	root      *os.Root // every file access goes through it
	cfg       config
	tools     []llmtoolkit.Tool
	handlers  map[string]handler
	byName    map[string]int
	conf      *confine.Root   // confines paths to root (the same dir and root)
	locks     pathLocks       // serialises the write tools per file
	spills    proc.SpillFiles // bash's spill files, removed by Close
	sbx       sandboxState
	removals  tmpRemovals   // the calls' temporary folders still being removed (bash_sandbox.go)
	jobs      *jobs.Table   // background jobs and terminals; nil unless on (options_jobs.go)
	sessions  bashSessions  // WithBashSession's persistent shells (bash_session.go)
	lsp       *lsp.Manager  // language servers; nil unless WithLanguageServers
	bashWatch bashWatch     // the files bash changes, for the servers (bash_changes.go)
	srvSbx    serverSandbox // how the servers run (language_servers_sandbox.go)
	srvWatch  serverWatch   // the tree's new names, for the servers (language_servers_watch.go)
	jobWatch  jobWatches    // the files background jobs change, for the servers (job_changes.go)

	bashPath atomic.Pointer[string] // bash as found in PATH, once (shellPath)
}

// handler runs one tool with arguments already validated against its schema.
type handler func(ctx context.Context, args map[string]any) (string, error)

// toolSpec pairs a tool's definition with its implementation.
type toolSpec struct {
	tool llmtoolkit.Tool
	run  handler
}

// makeSpec builds the spec of one of the built-in tools. Their definitions
// are written in code, so a bad one is a programming error: it panics, and the
// tests catch it.
func makeSpec(name, description string, params map[string]any, ann llmtoolkit.Annotations, run handler) toolSpec {
	t, err := llmtoolkit.NewToolFrom(llmtoolkit.Tool{Name: name, Description: description, Parameters: params, Annotations: &ann})
	if err != nil {
		panic(err)
	}
	return toolSpec{tool: t, run: run}
}

// New returns the tools confined to root, which must be an existing folder.
func New(root string, opts ...Option) (*CodeTools, error) {
	if root == "" {
		return nil, errors.New("codetools: root is empty; pass the folder the tools may work in")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("codetools: root %q: %w", root, err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("codetools: root %q does not exist or cannot be read: %w", root, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("codetools: root %q is not a folder", root)
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	fsroot, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("codetools: open root %q: %w", root, err)
	}
	c := &CodeTools{dir: abs, root: fsroot, cfg: defaultConfig(), handlers: map[string]handler{}, byName: map[string]int{}}
	c.conf = &confine.Root{FS: fsroot, Dir: abs, Outside: ErrOutsideRoot, ReadName: readName}
	for _, opt := range opts {
		opt(&c.cfg)
	}
	if err := c.setupSandbox(); err != nil {
		fsroot.Close()
		return nil, err
	}
	c.setupJobs()
	c.setupLanguageServers()
	for _, spec := range c.specs() {
		if c.sbx.policy.Mode == SandboxReadOnly && !processTools[spec.tool.Name] && !spec.tool.Annotations.ReadOnly {
			continue // the file tools write no more than bash may
		}
		c.byName[spec.tool.Name] = len(c.tools)
		c.tools = append(c.tools, spec.tool)
		c.handlers[spec.tool.Name] = spec.run
	}
	return c, nil
}

// specs lists the built-in tools, in the order Tools reports them.
func (c *CodeTools) specs() []toolSpec {
	specs := []toolSpec{
		c.readFileSpec(),
		c.writeFileSpec(),
		c.editFileSpec(),
		c.multiEditSpec(),
		c.appendToFileSpec(),
		c.listDirectorySpec(),
		c.treeSpec(),
		c.fileInfoSpec(),
		c.bashOrSessionSpec(),
		c.grepSpec(),
		c.globSpec(),
		c.httpGetSpec(),
	}
	if c.cfg.applyPatch {
		specs = append(specs, c.applyPatchSpec())
	}
	if c.cfg.shell {
		specs = append(specs, c.shellSpec())
	}
	specs = append(specs, c.jobSpecs()...)      // opt-in: WithBackgroundJobs
	specs = append(specs, c.terminalSpecs()...) // opt-in: WithTerminals
	if c.cfg.textEditor {
		specs = append(specs, c.textEditorSpec())
	}
	specs = append(specs, c.navigationSpecs()...) // opt-in: WithLanguageServers
	if c.cfg.memoryDir != "" {
		specs = append(specs, c.memorySpec())
	}
	// The path arguments, declared with the function each tool opens them
	// with (paths.go), for permission checks.
	paths := map[string]*llmtoolkit.PathArguments{
		"read_file": c.readPathFact(false), "file_info": c.infoPathFact(),
		"list_directory": c.readPathFact(true), "tree": c.readPathFact(true),
		"grep": c.readPathFact(true), "glob": c.readPathFact(true),
		"write_file": c.writePathFact(), "edit_file": c.writePathFact(),
		"multi_edit": c.writePathFact(), "append_to_file": c.writePathFact(),
		"apply_patch": c.applyPatchPathFact(), TextEditorName: c.readPathFact(false),
		"memory": c.memoryPathFact(), "exec_command": c.workdirFact(),
	}
	// The commands they run and the lines they type (command_facts.go),
	// checked as bash's command.
	commands := map[string]*llmtoolkit.CommandArguments{
		"bash": commandFact("command"), "exec_command": commandFact("cmd"), "write_stdin": c.typedFact(),
		ShellName: {Lists: []string{"commands"}},
	}
	confined := c.commandSandbox()
	for i := range specs {
		if f, ok := paths[specs[i].tool.Name]; ok {
			specs[i].tool.Paths = f
		}
		if f, ok := commands[specs[i].tool.Name]; ok {
			f.Sandbox = confined
			specs[i].tool.Commands = f
		}
	}
	return specs
}

// processTools run or stop commands, which the sandbox confines: they stay
// under a read-only sandbox.
var processTools = map[string]bool{"bash": true, ShellName: true, "job_kill": true, "exec_command": true, "write_stdin": true}

// Root returns the absolute path of the root folder.
func (c *CodeTools) Root() string { return c.dir }

// Close kills every background job and terminal (returning once their
// processes are gone), releases the root folder's handle and removes the
// spill files bash made (see [WithBashSpillDir]), the jobs' logs and the
// sandbox's temporary folder; a file whose command is still running is
// removed when it ends. The error reports every file that could not be
// removed. Calls after Close fail.
func (c *CodeTools) Close() error {
	waitWatches := c.stopJobWatches()
	c.closeJobs()
	waitWatches()
	return errors.Join(c.closeLanguageServers(), c.closeServerSandbox(), c.closeSpills(), c.closeSandbox(), c.root.Close())
}

// Tools lists the tools. The slice is shared: do not modify it.
func (c *CodeTools) Tools() []llmtoolkit.Tool { return c.tools }

// LookupTool returns one tool's definition.
func (c *CodeTools) LookupTool(name string) (llmtoolkit.Tool, bool) {
	i, ok := c.byName[name]
	if !ok {
		return llmtoolkit.Tool{}, false
	}
	return c.tools[i], true
}

// Resolve validates the call's arguments against the tool's schema and runs
// the tool. An unknown name is an error wrapping [llmtoolkit.ErrUnknownTool].
func (c *CodeTools) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	run, ok := c.handlers[call.Name]
	if !ok {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	args := call.Arguments
	if args == nil {
		args = map[string]any{}
	}
	if err := c.tools[c.byName[call.Name]].ValidateArguments(args); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return run(ctx, args)
}
