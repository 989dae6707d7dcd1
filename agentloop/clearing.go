package agentloop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/redact"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// ClearedPrefix starts the content of every tool result the loop cleared
// (see [ContextPolicy]): "[result cleared to save context] read_file
// {"path":"a.go"} returned 5123 bytes; call it again if you need it". A
// cleared result keeps its call id, tool name and error flag.
const ClearedPrefix = "[result cleared to save context] "

// minClearBytes: results this short are not worth clearing (the stub is
// about as long).
const minClearBytes = 256

// maxStubArgs caps the arguments a stub repeats.
const maxStubArgs = 200

// clearOld replaces the oldest tool results by stubs while the history is
// past ClearAt, down to three quarters of it, keeping the latest
// KeepToolResults. It returns the history's size after.
func (l *loop) clearOld(ctx context.Context, n, tokens int) int {
	p := &l.opts.ContextPolicy
	if p.ClearAt < 0 || tokens <= p.ClearAt {
		return tokens
	}
	target := p.ClearAt - p.ClearAt/4
	keep := p.KeepToolResults
	last := len(l.history) // the results at or after last are kept
	for i := len(l.history) - 1; i >= 0 && keep > 0; i-- {
		if l.history[i].Role == RoleTool {
			keep--
			last = i
		}
	}
	if keep > 0 {
		return tokens // fewer results than are kept
	}
	before, cleared := tokens, 0
	for i := 0; i < last && tokens > target; i++ {
		m := &l.history[i]
		if m.Role != RoleTool || len(m.Content) < minClearBytes || strings.HasPrefix(m.Content, ClearedPrefix) {
			continue
		}
		if cleared == 0 {
			// Copy on write: the slices sent before (to the SendFunc, an
			// Executor, a host that kept them) keep what they held.
			l.history = slices.Clone(l.history)
			m = &l.history[i]
		}
		stub := *m
		stub.Content = l.stub(i)
		l.acct.replaced(m, &stub)
		*m = stub
		cleared++
		tokens = l.acct.tokens(l.history)
	}
	if cleared > 0 {
		l.cleared += cleared
		l.report(ctx, ContextChange{Kind: EventContextCleared, Iteration: n, TokensBefore: before, TokensAfter: tokens, Messages: cleared})
	}
	return tokens
}

// stub is what replaces the content of tool message i: the call (its
// tool and arguments, sensitive values redacted), the size it had, where
// a spilled result still is, and how to get it again.
func (l *loop) stub(i int) string {
	m := &l.history[i]
	call, ok := l.callOf(i)
	var b strings.Builder
	b.WriteString(ClearedPrefix)
	name := m.ToolName
	if ok {
		name = call.Name
	}
	b.WriteString(name)
	if ok {
		b.WriteByte(' ')
		b.WriteString(l.stubArguments(call))
	}
	fmt.Fprintf(&b, " returned %d bytes", len(m.Content))
	if m.IsError {
		b.WriteString(" (an error)")
	}
	if path, ok := spilledPath(m.Content); ok {
		fmt.Fprintf(&b, "; the whole result is still in the file %s (read_file or grep it)", path)
	} else {
		b.WriteString("; call it again if you need it")
	}
	return b.String()
}

// callOf finds the call that tool message i answers, in the assistant
// message before it.
func (l *loop) callOf(i int) (llmtoolkit.Call, bool) {
	id := l.history[i].ToolCallID
	for j := i - 1; j >= 0; j-- {
		m := &l.history[j]
		if m.Role != RoleAssistant {
			continue
		}
		for _, c := range m.ToolCalls {
			if c.ID == id {
				return c, true
			}
		}
		return llmtoolkit.Call{}, false
	}
	return llmtoolkit.Call{}, false
}

// stubArguments is call's arguments as compact JSON, cut to maxStubArgs
// bytes, with the values of the tool's sensitive fields redacted.
func (l *loop) stubArguments(call llmtoolkit.Call) string {
	var s string
	if call.Malformed != nil {
		s = call.Malformed.Raw
	} else if data, err := json.Marshal(call.Arguments); err == nil {
		s = string(data)
	}
	if secrets := l.turnSecrets([]llmtoolkit.Call{call}); len(secrets) > 0 {
		s = redact.Scrub(s, secrets, Redacted)
	}
	if len(s) > maxStubArgs {
		s = textutil.CutUTF8(s, maxStubArgs) + "…"
	}
	return s
}

// spilledPath returns the path a spilled result's note names.
func spilledPath(content string) (string, bool) {
	i := strings.LastIndex(content, spillNoteFile)
	if i < 0 {
		return "", false
	}
	q, err := strconv.QuotedPrefix(content[i+len(spillNoteFile):])
	if err != nil {
		return "", false
	}
	path, err := strconv.Unquote(q)
	return path, err == nil
}
