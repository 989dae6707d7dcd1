package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/llmtoolkit/llmtoolkit/internal/buildinfo"
)

// Exit codes.
const (
	exitOK    = 0 // success
	exitError = 1 // the tool, the server or the database failed
	exitUsage = 2 // the command line is wrong
)

// defaultDB is the trace database used when --db or --trace-db is not given.
const defaultDB = "llmtoolkit-traces.db"

const topUsage = `Usage: llmtoolkit <command> [flags] [args]

Commands:
  tools    list the code tools (name and description), or --json definitions
  call     run one tool: llmtoolkit call NAME [ARGS_JSON|-]
  mcp      serve the code tools over MCP on stdin/stdout
  traces   show recent tool calls recorded in a trace database
  checkpoints  list, diff, save and rewind checkpoints of a folder
  version  print the versions of this command and of the llmtoolkit library

Run 'llmtoolkit <command> --help' for a command's flags.
`

// command is one subcommand: run gets the arguments after its name.
type command struct {
	run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = map[string]command{
	"tools":       {runTools},
	"call":        {runCall},
	"mcp":         {runMCP},
	"traces":      {runTraces},
	"checkpoints": {runCheckpoints},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command, separated from main so that tests can call it in
// process. It returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, topUsage)
		return exitOK
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, versionLine())
		return exitOK
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "llmtoolkit: unknown command %q; run 'llmtoolkit --help' for the list of commands\n", name)
		return exitUsage
	}
	return cmd.run(ctx, args[1:], stdin, stdout, stderr)
}

// versionLine says which versions this binary was built from: the
// command's module ("dev" for a build from a clone), the llmtoolkit library
// it links, and Go's.
func versionLine() string {
	cmd := buildinfo.Dev
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		cmd = info.Main.Version
	}
	return fmt.Sprintf("llmtoolkit %s (library %s, %s)", cmd, buildinfo.Version(), runtime.Version())
}

// newFlagSet returns a flag set for a subcommand that reports nothing itself:
// parseArgs prints the usage or the error.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("llmtoolkit "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseArgs parses args with fs, allowing flags before and after the
// positional arguments, which it returns. ok is false when the command must
// stop with code: 0 after printing usage for --help, 2 after a one-line error.
func parseArgs(fs *flag.FlagSet, usage string, args []string, stdout, stderr io.Writer) (positional []string, code int, ok bool) {
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			printDefaults(fs, stdout)
			return nil, exitOK, false
		}
		if err != nil {
			return nil, usageError(stderr, fs.Name(), err.Error()), false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, exitOK, true
		}
		// flag stops at the first non-flag; "--" ends flags for good.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), exitOK, true
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// usageError prints a one-line error about the command line and returns 2.
func usageError(stderr io.Writer, cmd, msg string) int {
	fmt.Fprintf(stderr, "%s: %s; run '%s --help' for usage\n", cmd, msg, cmd)
	return exitUsage
}

// printDefaults writes fs's flags to w.
func printDefaults(fs *flag.FlagSet, w io.Writer) {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	if b.Len() > 0 {
		fmt.Fprint(w, "\nFlags:\n", b.String())
	}
}

// defaultRoot is the current directory, or "." if it cannot be found.
func defaultRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}
