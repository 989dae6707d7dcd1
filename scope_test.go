package llmtoolkit

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScope: one value, set by edits on copies, read in one call.
func TestScope(t *testing.T) {
	ctx := context.Background()
	assert.Equal(t, Scope{}, ScopeFrom(ctx), "no scope: the zero Scope")

	session := map[string]any{"tenant_id": "t1"}
	parent := WithScope(ctx, func(s *Scope) {
		s.Session = session
		s.RunID = "run-1"
		s.StartTurn(3)
		s.ExcludedPaths = append(s.ExcludedPaths, "secrets/**")
	})
	child := WithScope(parent, func(s *Scope) {
		s.AgentID = "sub-1"
		s.ExcludedPaths = append(s.ExcludedPaths, "build/**")
	})
	sibling := WithScope(parent, func(s *Scope) {
		s.ExcludedPaths = append(s.ExcludedPaths, "vendor/**")
	})

	p, c, sib := ScopeFrom(parent), ScopeFrom(child), ScopeFrom(sibling)
	assert.Equal(t, "run-1", c.RunID, "the child keeps what it did not change")
	assert.Equal(t, 3, c.Iteration)
	assert.True(t, p.Turn == c.Turn, "the same turn")
	assert.Equal(t, "t1", c.Session["tenant_id"])
	assert.Empty(t, p.AgentID, "an edit never changes the parent's scope")
	assert.Equal(t, []string{"secrets/**"}, p.ExcludedPaths)
	assert.Equal(t, []string{"secrets/**", "build/**"}, c.ExcludedPaths)
	assert.Equal(t, []string{"secrets/**", "vendor/**"}, sib.ExcludedPaths, "siblings never share an append")

	again := WithScope(parent, func(s *Scope) { s.StartTurn(3) })
	assert.True(t, p.Turn != ScopeFrom(again).Turn, "a new turn, whatever its number")
	assert.True(t, p.Turn != Turn{})
	assert.Equal(t, Turn{}, Scope{}.Turn, "the zero Turn is no turn")
}

// TestListeners: Show and Progress replace, Parts, Definition and
// SubAgent add up; ListenersFrom says who listens.
func TestListeners(t *testing.T) {
	ctx := context.Background()
	assert.Equal(t, Listeners{}, ListenersFrom(ctx), "no one listens")

	var mu sync.Mutex
	var got []string
	note := func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() }
	ctx = WithListeners(ctx, Listeners{
		Show:       func(d Display) { note("show1 " + d.Kind) },
		Progress:   func(p Progress) { note("progress1 " + p.Message) },
		Parts:      func(p []Part) { note("parts1") },
		Definition: func(tool Tool) { note("def1 " + tool.Name) },
		SubAgent:   func(r Resolver) Resolver { note("wrap1"); return r },
	})
	ctx = WithListeners(ctx, Listeners{
		Show:       func(d Display) { note("show2 " + d.Kind) },
		Progress:   func(p Progress) { note("progress2 " + p.Message) },
		Parts:      func(p []Part) { note("parts2") },
		Definition: func(tool Tool) { note("def2 " + tool.Name) },
		SubAgent:   func(r Resolver) Resolver { note("wrap2"); return r },
	})
	Show(ctx, Display{Kind: "diff"})
	ReportProgress(ctx, Progress{Message: "half"})
	Attach(ctx, TextPart("x"))
	TellDefinition(ctx, Tool{Name: "t"})
	require.NotNil(t, WrapForSubAgent(ctx, Compose()))
	assert.Equal(t, []string{"show2 diff", "progress2 half", "parts2", "parts1", "def2 t", "def1 t", "wrap2", "wrap1"}, got)

	l := ListenersFrom(ctx)
	require.NotNil(t, l.Show)
	require.NotNil(t, l.Progress)
	require.NotNil(t, l.Parts)
	require.NotNil(t, l.Definition)
	require.NotNil(t, l.SubAgent)
	got = nil
	l.Parts([]Part{TextPart("y")})
	assert.Equal(t, []string{"parts2", "parts1"}, got, "ListenersFrom's Parts stands for all of them")
	assert.Equal(t, ctx, WithListeners(ctx, Listeners{}), "no listener: ctx as it was")
}
