package agentloop

import (
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
)

// fitParts keeps res's parts, in order, while their bytes
// ([llmtoolkit.Part.Size]) fit in left; a part that does not fit is
// dropped whole, never cut, and a line of res.Content says so. It returns
// the bytes kept: the parts' and the notes'. res.Parts is replaced, not
// changed in place (the slice may be shared with the tool).
func fitParts(res *llmtoolkit.Result, left, budget int) int {
	if len(res.Parts) == 0 {
		return 0
	}
	if llmtoolkit.PartsSize(res.Parts) <= left {
		return llmtoolkit.PartsSize(res.Parts)
	}
	used := 0
	kept := make([]llmtoolkit.Part, 0, len(res.Parts))
	for _, p := range res.Parts {
		if n := p.Size(); n <= left-used {
			kept = append(kept, p)
			used += n
			continue
		}
		note := partDroppedNote(p, budget)
		res.Content += note
		used += len(note)
	}
	if len(kept) == 0 {
		kept = nil
	}
	res.Parts = kept
	return used
}

func partDroppedNote(p llmtoolkit.Part, budget int) string {
	return fmt.Sprintf("\n[%s not sent: one turn keeps at most %d bytes of tool results (Options.MaxTurnResultBytes); ask for a smaller one, or for fewer at a time]", p, budget)
}
