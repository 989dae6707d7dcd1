package llmtoolkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// named wraps a resolver and says so.
type named struct {
	llmtoolkit.Resolver
	name string
}

func TestWrapForSubAgentNestsAsTheParentsStack(t *testing.T) {
	wrap := func(name string) func(llmtoolkit.Resolver) llmtoolkit.Resolver {
		return func(r llmtoolkit.Resolver) llmtoolkit.Resolver { return named{r, name} }
	}
	base := llmtoolkittest.NewFake(map[string]string{"t": "ok"})
	assert.Same(t, base, llmtoolkit.WrapForSubAgent(context.Background(), base), "no wrappers: r itself")
	assert.Nil(t, llmtoolkit.WrapForSubAgent(llmtoolkit.WithListeners(context.Background(), llmtoolkit.Listeners{SubAgent: wrap("x")}), nil))

	outer := llmtoolkit.WithListeners(context.Background(), llmtoolkit.Listeners{SubAgent: wrap("outer")})
	inner := llmtoolkit.WithListeners(outer, llmtoolkit.Listeners{SubAgent: wrap("inner")})
	sibling := llmtoolkit.WithListeners(outer, llmtoolkit.Listeners{SubAgent: wrap("sibling")})

	got := llmtoolkit.WrapForSubAgent(inner, base).(named)
	assert.Equal(t, "outer", got.name, "the first put on the context is outermost")
	assert.Equal(t, "inner", got.Resolver.(named).name)
	assert.Same(t, base, got.Resolver.(named).Resolver)
	assert.Equal(t, "sibling", llmtoolkit.WrapForSubAgent(sibling, base).(named).Resolver.(named).name, "contexts sharing a parent do not share wrappers")
}
