package mcpgo

import (
	"context"

	"github.com/llmtoolkit/llmtoolkit"
)

// indexed gives a resolver without [llmtoolkit.ToolLookup] a name index over
// the tools listed when its handlers were built, so that
// [llmtoolkit.Execute] finds a tool's schema without scanning the list on
// every call. Definitions pass through unchanged.
type indexed struct {
	r      llmtoolkit.Resolver
	tools  []llmtoolkit.Tool
	byName map[string]int
}

// withIndex returns r itself when it can look tools up, or r indexed over
// tools.
func withIndex(r llmtoolkit.Resolver, tools []llmtoolkit.Tool) llmtoolkit.Resolver {
	if _, ok := r.(llmtoolkit.ToolLookup); ok {
		return r
	}
	ix := &indexed{r: r, tools: tools, byName: make(map[string]int, len(tools))}
	for i, t := range tools {
		if _, dup := ix.byName[t.Name]; !dup {
			ix.byName[t.Name] = i
		}
	}
	return ix
}

func (ix *indexed) Tools() []llmtoolkit.Tool { return ix.tools }

func (ix *indexed) LookupTool(name string) (llmtoolkit.Tool, bool) {
	i, ok := ix.byName[name]
	if !ok {
		return llmtoolkit.Tool{}, false
	}
	return ix.tools[i], true
}

func (ix *indexed) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	return ix.r.Resolve(ctx, call)
}
