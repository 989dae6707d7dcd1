package agentloop

import (
	"errors"

	"github.com/llmtoolkit/llmtoolkit"
)

// breaker counts, per tool, how many times in a row the tool failed with the
// same error content. A success of the tool, or a different error, resets
// its count; calls of other tools do not.
type breaker struct {
	threshold int // <= 0: disabled
	streaks   map[string]streak
}

type streak struct {
	message string
	count   int
}

func newBreaker(threshold int) breaker {
	return breaker{threshold: threshold, streaks: map[string]streak{}}
}

// observe records one turn's results in call order and returns a
// *CircuitBreakerError for the first tool that reaches the threshold.
// Halts are not counted: they end the loop by themselves. Refusals of the
// host (llmtoolkit.ErrDenied, llmtoolkit.ErrLimitReached: a permission
// denied, a budget spent) are not counted either, and leave the tool's
// streak as it was: a refusal is the host's decision, not a failing tool,
// and the model can go on without the call.
// Nor are calls past Options.MaxToolCalls, which did not run.
func (b *breaker) observe(results []llmtoolkit.Result) error {
	if b.threshold <= 0 {
		return nil
	}
	var tripped error
	for _, res := range results {
		if !res.IsError {
			delete(b.streaks, res.Name)
			continue
		}
		if hostRefusal(res.Err) {
			continue
		}
		s := b.streaks[res.Name]
		if s.count > 0 && s.message == res.Content {
			s.count++
		} else {
			s = streak{message: res.Content, count: 1}
		}
		b.streaks[res.Name] = s
		if s.count >= b.threshold && tripped == nil {
			tripped = &CircuitBreakerError{Tool: res.Name, Message: res.Content, Count: s.count}
		}
	}
	return tripped
}

// hostRefusal reports an error the breaker does not count: a halt (it ends
// the loop by itself) or a call the host refused before it ran (a
// permission denied, a limit reached, a call past Options.MaxToolCalls).
func hostRefusal(err error) bool {
	return errors.Is(err, llmtoolkit.ErrHalt) || errors.Is(err, llmtoolkit.ErrDenied) ||
		errors.Is(err, llmtoolkit.ErrLimitReached) || errors.Is(err, ErrTooManyCalls)
}
