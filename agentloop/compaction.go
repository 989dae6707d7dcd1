package agentloop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"

	"github.com/llmtoolkit/llmtoolkit"
)

// SummaryPrompt is the user message that follows the span in the
// [ModelStep] of a compaction: what an engine that has the model write the
// summary sends it.
const SummaryPrompt = "Summarize the conversation above for your own later use: the task, what was done, " +
	"the files read or changed (by path), the commands run and their outcomes (failures verbatim), " +
	"decisions taken and what is left to do. Write only the summary."

// SummaryHeader starts the user message that replaces a compacted span.
const SummaryHeader = "[Summary of the earlier part of this conversation, compacted to save context"

// manage keeps the history inside the budget before the model call of
// iteration n: it counts it, clears old results, compacts, and returns
// the size the request will have, or an error wrapping ErrContextBudget
// (or an *ExecutorError, when the compaction step failed in the engine).
func (l *loop) manage(ctx context.Context, n int) (int, error) {
	tokens := l.acct.tokens(l.history)
	tokens = l.clearOld(ctx, n, tokens)
	var sumErr error
	if p := &l.opts.ContextPolicy; p.Summarize != nil && tokens > p.CompactAt {
		var err error
		tokens, err = l.compact(ctx, n, tokens)
		var ee *ExecutorError
		if errors.As(err, &ee) {
			return tokens, err
		}
		sumErr = err
	}
	if tokens > l.opts.ContextBudget {
		err := fmt.Errorf("%w: before iteration %d the history takes about %d tokens and the budget is %d (Options.ContextBudget); clearing old tool results and compaction could not bring it under",
			ErrContextBudget, n, tokens, l.opts.ContextBudget)
		if sumErr != nil {
			err = fmt.Errorf("%w (compaction failed: %w)", err, sumErr)
		}
		return tokens, err
	}
	return tokens, nil
}

// compact replaces the oldest span of the history by its summary.
func (l *loop) compact(ctx context.Context, n, tokens int) (int, error) {
	start, end := l.compactSpan()
	if end-start < 2 {
		return tokens, nil // nothing worth compacting
	}
	span := slices.Clone(l.history[start:end])
	summary, err := l.summarize(ctx, n, span)
	if err != nil {
		return tokens, err
	}
	// The summary is kept (and stored by durable engines) in place of the
	// span: no declared secret it quotes stays in it.
	msg := UserMessage(fmt.Sprintf("%s (%d messages)]\n%s", SummaryHeader, len(span), l.scrub(summary)))
	history := make([]Message, 0, len(l.history)-len(span)+1)
	history = append(history, l.history[:start]...)
	history = append(history, msg)
	history = append(history, l.history[end:]...)
	l.history = history
	l.acct.recount(history)
	after := l.acct.tokens(history)
	l.compactions++
	l.report(ctx, ContextChange{Kind: EventContextCompacted, Iteration: n, TokensBefore: tokens, TokensAfter: after, Messages: len(span)})
	return after, nil
}

// compactSpan returns the span to compact: after the leading system
// messages and the first user message (the task), up to the latest
// messages worth KeepRecent tokens (at least the last turn). The kept
// part starts at a user or assistant message, so no call is separated
// from its results.
func (l *loop) compactSpan() (start, end int) {
	h := l.history
	for start < len(h) && h[start].Role == RoleSystem {
		start++
	}
	if start < len(h) && h[start].Role == RoleUser {
		start++
	}
	end = len(h)
	kept := 0
	// The last turn is kept whole: go back to its assistant message.
	for end > start && h[end-1].Role == RoleTool {
		end--
		kept += estimateMessage(&h[end])
	}
	if end > start {
		end--
		kept += estimateMessage(&h[end])
	}
	for end > start {
		j := end - 1
		for j > start && h[j].Role == RoleTool {
			j--
		}
		// h[j:end] is one turn (an assistant message and its results, or
		// a user message).
		t := 0
		for k := j; k < end; k++ {
			t += estimateMessage(&h[k])
		}
		if kept+t > l.opts.ContextPolicy.KeepRecent {
			break
		}
		kept += t
		end = j
	}
	return start, end
}

// summarize runs Summarize on span as a model step (through the Executor
// when one is set).
func (l *loop) summarize(ctx context.Context, n int, span []Message) (string, error) {
	call := func(ctx context.Context) (resp Response, err error) {
		defer func() {
			if v := recover(); v != nil {
				pe := &ModelPanicError{Value: v, Stack: debug.Stack()}
				l.opts.Logger.ErrorContext(ctx, "agentloop: ContextPolicy.Summarize panicked",
					slog.Int("iteration", n), slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
				resp, err = Response{}, pe
			}
		}()
		s, err := l.opts.ContextPolicy.Summarize(ctx, span)
		return Response{Content: s, StopReason: "compaction"}, err
	}
	var resp Response
	var err error
	if l.opts.Executor == nil {
		resp, err = call(ctx)
	} else {
		var called bool
		var callErr error
		wrapped := func(ctx context.Context) (Response, error) {
			r, e := call(ctx)
			called, callErr = true, e
			return r, e
		}
		msgs := append(slices.Clip(span), UserMessage(SummaryPrompt))
		resp, err = l.opts.Executor.Model(ctx, ModelStep{Iteration: n, Messages: msgs, Compaction: true}, wrapped)
		if err != nil && !isModelError(err, called, callErr) {
			return "", &ExecutorError{Step: StepModel, Iteration: n, Err: err}
		}
	}
	if err == nil && resp.Content == "" {
		err = errors.New("the summary is empty")
	}
	if err != nil {
		l.opts.Logger.WarnContext(ctx, "agentloop: compaction failed; the history is kept as it is",
			slog.Int("iteration", n), slog.String("error", err.Error()))
		return "", fmt.Errorf("ContextPolicy.Summarize: %w", err)
	}
	return resp.Content, nil
}

// budget counts and manages the history before the model call of
// iteration n, which offers tools.
func (l *loop) budget(ctx context.Context, n int, tools []llmtoolkit.Tool) (int, error) {
	l.acct.offer(tools)
	tokens, err := l.manage(ctx, n)
	l.acct.sent()
	return tokens, err
}

// removeSpills removes the run's spill files when it owns them.
func (l *loop) removeSpills(ctx context.Context) {
	if l.spiller == nil || l.opts.ContextPolicy.KeepSpillFiles || l.opts.Executor != nil {
		return
	}
	if err := l.spiller.removeAll(); err != nil {
		l.opts.Logger.WarnContext(ctx, "agentloop: the run's spill files could not all be removed", slog.String("error", err.Error()))
	}
}
