package codetools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/proc"
)

// ShellName is the name of the shell tool ([WithShell]), the name the
// Responses API gives its shell tool.
const ShellName = "shell"

// NativeShell is the llmtoolkit.Tool.Native of the shell tool as
// [WithModelTools] makes it for the GPT-5 family: package provider declares
// it to the Responses API as {"type": "shell"}, reads each shell_call as a
// call of this tool and answers it with a shell_call_output.
const NativeShell = "openai/shell"

// NativeApplyPatch is the llmtoolkit.Tool.Native of apply_patch as
// [WithModelTools] makes it for the GPT-5 family: package provider declares
// it to the Responses API as {"type": "apply_patch"}, reads each
// apply_patch_call (one file's create_file, update_file or delete_file) as
// a call of apply_patch with that operation as a V4A patch, and answers it
// with an apply_patch_call_output.
const NativeApplyPatch = "openai/apply_patch"

// maxShellCommands caps the commands of one shell call.
const maxShellCommands = 16

// WithShell adds the shell tool (off by default): the Responses API's
// shell, over bash's engine. A call runs its commands one after the other,
// each with bash -c in the working directory as bash runs its command (the
// sandbox, the process containment, the output caps and spill files), with
// stdout and stderr apart; a command that times out ends the call (the
// commands after it are not run). The answer is JSON, the shell_call_output's
// "output": for each command run, {"stdout", "stderr", "outcome"} with
// outcome {"type": "exit", "exit_code": N} or {"type": "timeout"}. A non-zero
// exit is not an error of the call. Each command is shown as a process
// Display ([ProcessPayload]) and checked by a permission layer as bash's
// command (llmtoolkit.Tool.Commands).
func WithShell() Option { return func(c *config) { c.shell = true } }

func (c *CodeTools) shellSpec() toolSpec {
	maxMS := int(c.cfg.bash.bashMaxTimeout / time.Millisecond)
	defMS := int(c.cfg.bash.bashTimeout / time.Millisecond)
	s := makeSpec(ShellName,
		fmt.Sprintf("Run shell commands one after the other, each with bash -c in the working directory, and return for each its stdout, its stderr and how it ended, as JSON: "+
			`{"output":[{"stdout":"...","stderr":"...","outcome":{"type":"exit","exit_code":0}}]} (outcome {"type":"timeout"} for a command killed at its timeout, which ends the call). `+
			"Standard input is empty: pass non-interactive flags. "+c.bashScope()+" "+
			"Each stream shows its last %d lines or %d KiB, with the path of a file holding the whole."+c.spillReach(),
			defMS/1000, maxMS/1000, proc.MaxLines, proc.MaxBytes/1024),
		schemaObject(map[string]any{
			"commands":          map[string]any{"type": "array", "minItems": 1, "maxItems": maxShellCommands, "items": map[string]any{"type": "string", "minLength": 1}, "description": "The command lines to run, in order."},
			"timeout_ms":        map[string]any{"type": "integer", "minimum": 1, "description": fmt.Sprintf("Milliseconds before each command is killed. Default: %d, at most %d.", defMS, maxMS)},
			"max_output_length": map[string]any{"type": "integer", "minimum": 1, "description": "The most characters of each command's stdout and stderr together to return (their ends are kept)."},
		}, "commands"),
		llmtoolkit.Annotations{Destructive: true}, c.runShell)
	if c.cfg.nativeOpenAI {
		s.tool.Native = NativeShell
	}
	return s
}

// shellOutput is one command's entry in the shell tool's answer, in the
// Responses API's shape.
type shellOutput struct {
	Stdout  string       `json:"stdout"`
	Stderr  string       `json:"stderr"`
	Outcome shellOutcome `json:"outcome"`
}

type shellOutcome struct {
	Type     string `json:"type"` // "exit" or "timeout"
	ExitCode *int   `json:"exit_code,omitempty"`
}

type shellAnswer struct {
	Output          []shellOutput `json:"output"`
	MaxOutputLength int           `json:"max_output_length,omitempty"`
}

func (c *CodeTools) runShell(ctx context.Context, args map[string]any) (string, error) {
	if c.spills.IsClosed() {
		return "", fmt.Errorf("shell: %w", errToolsClosed)
	}
	var commands []string
	if vs, ok := args["commands"].([]any); ok {
		for _, v := range vs {
			if s, ok := v.(string); ok {
				commands = append(commands, s)
			}
		}
	}
	if len(commands) == 0 {
		return "", fmt.Errorf("shell: commands must hold at least one command line")
	}
	timeout := c.cfg.bash.bashTimeout
	if ms := intArg(args, "timeout_ms", 0); ms > 0 {
		timeout = min(time.Duration(ms)*time.Millisecond, c.cfg.bash.bashMaxTimeout)
	}
	limit := intArg(args, "max_output_length", 0)
	answer := shellAnswer{Output: []shellOutput{}, MaxOutputLength: limit}
	shown := ShellPayload{Commands: []ProcessPayload{}}
	defer func() { llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayShell, Payload: shown}) }()
	for _, command := range commands {
		r, err := c.runOnce(ctx, command, timeout, true)
		if err != nil {
			return "", fmt.Errorf("shell: %w", err)
		}
		stdout, stderr := streamText(r.out), streamText(r.errOut)
		if r.left != "" {
			stderr += "\n[" + r.left + "]"
		}
		if r.waitErr != nil && r.code == -1 {
			stderr += "\n[" + r.waitErr.Error() + "]"
		}
		text := stdout
		if stderr != "" {
			text = strings.TrimPrefix(text+"\n"+stderr, "\n")
		}
		shown.Commands = append(shown.Commands, r.show(ctx, c, command, text))
		if err := r.trap.Err(); err != nil {
			return "", err
		}
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("shell: command cancelled: %w", err)
		}
		if limit > 0 {
			stdout, stderr = cutStreams(stdout, stderr, limit)
		}
		o := shellOutput{Stdout: stdout, Stderr: stderr, Outcome: shellOutcome{Type: "exit", ExitCode: &r.code}}
		if r.timedOut {
			o.Outcome = shellOutcome{Type: "timeout"}
		}
		answer.Output = append(answer.Output, o)
		if r.timedOut {
			break
		}
	}
	out, err := json.Marshal(answer)
	if err != nil {
		return "", fmt.Errorf("shell: %w", err)
	}
	return string(out), nil
}

// streamText is what one stream of a command shows: "" when it wrote
// nothing, else its tail with bash's notes.
func streamText(o *proc.Output) string {
	if o.Total() == 0 {
		o.Finish()
		return ""
	}
	return o.Text()
}

// cutStreams keeps at most n characters of stdout and stderr together,
// the end of each: stderr keeps up to half when both are longer.
func cutStreams(stdout, stderr string, n int) (string, string) {
	lo, le := utf8.RuneCountInString(stdout), utf8.RuneCountInString(stderr)
	if lo+le <= n {
		return stdout, stderr
	}
	keepErr := min(le, max(n/2, n-lo))
	return lastRunes(stdout, n-keepErr), lastRunes(stderr, keepErr)
}

// lastRunes returns the last n characters of s.
func lastRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	count := utf8.RuneCountInString(s)
	for i := range s {
		if count <= n {
			return s[i:]
		}
		count--
	}
	return ""
}
