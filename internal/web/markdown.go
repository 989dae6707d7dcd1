package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"golang.org/x/net/html"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// A page's Markdown can be far larger than its HTML, and far costlier to
// make (an empty link becomes the page's full URL; a line deep in nested
// lists is indented again at every level), and the converter neither
// streams nor stops on its own. So the page is cut to a number of nodes,
// elements nested too deep are flattened, and the conversion runs under a
// markdownGuard with a budget, all in proportion to maxBytes.
//
// Measured on the hostile pages of the tests at 10 MiB (the most maxBytes
// allows): at most about 4 s of CPU and 350 MiB at peak; at the default
// 1 MiB, a tenth of that. Ordinary pages convert about 15% slower than
// without the guard, to the same bytes.
const (
	// markdownAttempts is how many times a page whose Markdown is too
	// large is converted, from a shorter prefix each time, before http_get
	// shows the page's text instead.
	markdownAttempts = 3
	// markdownSlack is added to every budget, for small maxBytes.
	markdownSlack = 64 << 10
	// markdownWorkPerByte times maxBytes is the most Markdown all the
	// elements may render together, each byte counted once per element
	// around it. Documentation pages need about 10 times their Markdown.
	markdownWorkPerByte = 12
	// markdownBytesPerNode: the page is cut after maxBytes divided by this
	// many nodes (at least markdownMinNodes), which bounds the memory of its
	// tree. Documentation pages have a node (text included) every 20 to 30
	// bytes.
	markdownBytesPerNode = 16
	markdownMinNodes     = 16 << 10
	// markdownMaxDepth is the deepest nesting kept: deeper elements are
	// replaced by their content.
	markdownMaxDepth = 64
	// markdownKeptBuffer is the largest buffer the guard keeps for the
	// next element at the same depth.
	markdownKeptBuffer = 64 << 10
)

var (
	// errMarkdownTooLarge stops a conversion where one element's Markdown
	// is larger than twice maxBytes.
	errMarkdownTooLarge = errors.New("the Markdown is too large")
	// errMarkdownTooCostly stops a conversion that rendered more than its
	// work budget.
	errMarkdownTooCostly = errors.New("the Markdown took too much work to make")
)

// Markdown converts page to Markdown, with links made absolute against
// domain, in work and memory bounded by maxBytes. When the page is too
// large, a shorter prefix of it is converted (cut is true, note says so);
// when even that fails, the page is too intricate, or it cannot be parsed,
// the page's plain text is returned and note says why.
//
// It returns as soon as ctx ends: the conversion runs in a goroutine of its
// own, which stops at its next check of ctx (each element, at most a few
// times maxBytes of work).
//
// A panic in the conversion never escapes: one in the converter is logged
// with its stack (internal/guard) and the page's text is shown instead;
// one elsewhere is logged and returned as the error wrap makes of it.
func Markdown(ctx context.Context, page, domain string, maxBytes int, wrap guard.Wrap) (md string, cut bool, note string, err error) {
	// Written by the goroutine only, read only once it has sent its error.
	var r struct {
		md, note string
		cut      bool
	}
	done := guard.Go("http_get conversion", func() (err error) {
		r.md, r.cut, r.note, err = convertPage(ctx, page, domain, maxBytes)
		return err
	}, wrap)
	select {
	case err := <-done:
		if err != nil {
			return "", false, "", err
		}
		return r.md, r.cut, r.note, nil
	case <-ctx.Done():
		return "", false, "", ctx.Err()
	}
}

// convertPage is Markdown, in the calling goroutine.
func convertPage(ctx context.Context, page, domain string, maxBytes int) (md string, cut bool, note string, err error) {
	budget := markdownBudget{
		element: 2*maxBytes + markdownSlack,
		work:    markdownWorkPerByte*int64(maxBytes) + markdownSlack,
	}
	prefix := page
	// A page has at most a node per tag and one more between tags: count
	// its nodes only when it may have too many.
	if maxNodes := max(maxBytes/markdownBytesPerNode, markdownMinNodes); 2*strings.Count(page, "<")+1 > maxNodes {
		if prefix, err = cutPage(ctx, page, maxNodes, makesNode); err != nil {
			return "", false, "", err
		}
	}
	for attempt := 1; ; attempt++ {
		md, started, err := convertMarkdown(ctx, prefix, domain, budget)
		switch {
		case err == nil:
			if len(prefix) < len(page) {
				note = fmt.Sprintf("Markdown of the first %s of the page only: the whole page is too large to convert.", textutil.HumanSize(int64(len(prefix))))
			}
			return md, len(prefix) < len(page), note, nil
		case ctx.Err() != nil:
			if !errors.Is(err, ctx.Err()) {
				err = ctx.Err()
			}
			return "", false, "", err
		case attempt < markdownAttempts && errors.Is(err, errMarkdownTooLarge):
			// What was rendered so far overflowed: half as much will fit.
			if prefix, err = cutPage(ctx, prefix, started/2, isElement); err != nil {
				return "", false, "", err
			}
		default: // too large still, too costly (deep nesting), or not HTML the parser takes
			text, err2 := Text(ctx, page)
			return text, false, fmt.Sprintf("Shown as plain text: the conversion to Markdown failed (%v).", err), err2
		}
	}
}

// cutPage returns the longest prefix of page with at most max tokens of
// the kinds counted.
func cutPage(ctx context.Context, page string, max int, counted func(html.TokenType) bool) (string, error) {
	z := html.NewTokenizer(strings.NewReader(page))
	offset, n := 0, 0
	for tokens := 1; ; tokens++ {
		tt := z.Next()
		if tt == html.ErrorToken {
			return page, nil
		}
		if counted(tt) {
			if n++; n > max {
				return page[:offset], nil
			}
		}
		if tokens%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		offset += len(z.Raw())
	}
}

// makesNode tells the tokens that become nodes of the tree.
func makesNode(tt html.TokenType) bool { return tt != html.EndTagToken }

// isElement tells the tokens that become elements.
func isElement(tt html.TokenType) bool {
	return tt == html.StartTagToken || tt == html.SelfClosingTagToken
}

// markdownBudget bounds one conversion.
type markdownBudget struct {
	element int   // the most Markdown bytes one element may render
	work    int64 // the most Markdown bytes rendered in all, counted at every level
}

// convertMarkdown converts page to Markdown under a markdownGuard. On
// error, started is how many of the page's elements come before the last
// one it began to render.
func convertMarkdown(ctx context.Context, page, domain string, budget markdownBudget) (md string, started int, err error) {
	doc, err := html.Parse(textutil.ContextReader(ctx, strings.NewReader(page)))
	if err != nil {
		return "", 0, err
	}
	mg := &markdownGuard{ctx: ctx, budget: budget}
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), mg))
	defer func() {
		if r := recover(); r != nil {
			abort, ok := r.(markdownAbort)
			if !ok { // a bug, in the converter or here: log it with its stack
				abort.err = guard.Recovered("http_get conversion", r, nil)
			}
			md, started, err = "", mg.pageElements(mg.elements), abort.err
		}
	}()
	out, err := conv.ConvertNode(doc, converter.WithContext(ctx), converter.WithDomain(domain))
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return "", mg.pageElements(mg.elements), err
	}
	return string(out), mg.elements, nil
}

// markdownGuard is a converter plugin that bounds a conversion. Its renderer
// runs first for every element: it has the converter render the element
// into a buffer of its own, measures the result, and aborts the conversion
// (by panicking with a markdownAbort, which convertMarkdown recovers) when
// the element's Markdown or all the Markdown rendered so far outgrow the
// budget, or when the context ends.
type markdownGuard struct {
	ctx      context.Context
	budget   markdownBudget
	elements int             // elements started
	work     int64           // Markdown bytes rendered, counted at every level
	inner    *html.Node      // the element handed on to the other renderers
	depth    int             // elements being rendered
	buffers  []*bytes.Buffer // their buffers, reused

	kept    int        // elements tidy kept
	dropped []dropMark // where tidy dropped elements, in document order
}

// dropMark says that tidy had dropped dropped elements when it had kept
// kept.
type dropMark struct{ kept, dropped int }

// pageElements is the place in the page of the n-th element rendered:
// n, plus the elements tidy dropped before it.
func (g *markdownGuard) pageElements(n int) int {
	i := sort.Search(len(g.dropped), func(i int) bool { return g.dropped[i].kept >= n })
	if i == 0 {
		return n
	}
	return n + g.dropped[i-1].dropped
}

// drop records that tidy dropped n elements.
func (g *markdownGuard) drop(n int) {
	total := n
	if last := len(g.dropped) - 1; last >= 0 {
		total += g.dropped[last].dropped
		if g.dropped[last].kept == g.kept {
			g.dropped[last].dropped = total
			return
		}
	}
	g.dropped = append(g.dropped, dropMark{g.kept, total})
}

// markdownAbort is the panic value that stops a conversion.
type markdownAbort struct{ err error }

// Name implements converter.Plugin.
func (g *markdownGuard) Name() string { return "llmtoolkit-markdown-guard" }

// Init implements converter.Plugin.
func (g *markdownGuard) Init(conv *converter.Converter) error {
	conv.Register.PreRenderer(g.tidy, math.MinInt)
	conv.Register.PreRenderer(func(converter.Context, *html.Node) { g.check() }, math.MaxInt)
	conv.Register.Renderer(g.render, math.MinInt)
	return nil
}

func (g *markdownGuard) check() {
	if err := g.ctx.Err(); err != nil {
		panic(markdownAbort{err})
	}
}

// tidy prepares the tree for the converter. It replaces the elements
// nested deeper than markdownMaxDepth by their content, and does in linear
// time what the base plugin's first pass does in quadratic time when many
// text nodes end up side by side: it removes the nodes the converter drops
// (comments, scripts, styles, …) and merges the text nodes they separated.
// It notes which elements it dropped, for pageElements.
func (g *markdownGuard) tidy(ctx converter.Context, doc *html.Node) {
	g.check()
	nodes := 0
	var walk func(n *html.Node, depth int) // the parser refuses nesting deeper than 512
	walk = func(n *html.Node, depth int) {
		var prev *html.Node
		var run strings.Builder // the text of prev and the text nodes after it
		flush := func() {
			if run.Len() > 0 {
				prev.Data = run.String()
				run.Reset()
			}
		}
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if nodes++; nodes%4096 == 0 {
				g.check()
			}
			if tagType, _ := ctx.GetTagType(nodeName(c)); tagType == converter.TagTypeRemove {
				g.drop(countElements(c))
				n.RemoveChild(c)
			} else if c.Type == html.ElementNode && depth >= markdownMaxDepth && c.FirstChild != nil {
				next = c.FirstChild // c's children take its place
				for gc := next; gc != nil; {
					after := gc.NextSibling
					c.RemoveChild(gc)
					n.InsertBefore(gc, c)
					gc = after
				}
				g.drop(1)
				n.RemoveChild(c)
			} else if c.Type == html.TextNode && prev != nil && prev.Type == html.TextNode {
				if run.Len() == 0 {
					run.WriteString(prev.Data)
				}
				run.WriteString(c.Data)
				n.RemoveChild(c)
			} else {
				flush()
				if c.Type == html.ElementNode {
					g.kept++
				}
				walk(c, depth+1)
				prev = c
			}
			c = next
		}
		flush()
	}
	walk(doc, 0)
}

// countElements counts n and the elements under it.
func countElements(n *html.Node) int {
	count := 0
	if n.Type == html.ElementNode {
		count++
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		count += countElements(c)
	}
	return count
}

// nodeName is the name the converter gives n (as dom.NodeName).
func nodeName(n *html.Node) string {
	switch n.Type {
	case html.TextNode:
		return "#text"
	case html.DocumentNode:
		return "#document"
	case html.CommentNode:
		return "#comment"
	case html.ErrorNode:
		return "#error"
	case html.ElementNode, html.DoctypeNode:
		return n.Data
	}
	return ""
}

func (g *markdownGuard) render(ctx converter.Context, w converter.Writer, n *html.Node) converter.RenderStatus {
	if n == g.inner { // the call made below: let the other renderers have it
		g.inner = nil
		return converter.RenderTryNext
	}
	g.elements++
	g.check()
	if len(g.buffers) == g.depth {
		g.buffers = append(g.buffers, new(bytes.Buffer))
	}
	buf := g.buffers[g.depth]
	g.depth++
	g.inner = n
	ctx.RenderNodes(ctx, buf, n)
	g.depth--
	g.work += int64(buf.Len())
	if g.work > g.budget.work {
		panic(markdownAbort{errMarkdownTooCostly})
	}
	if buf.Len() > g.budget.element {
		panic(markdownAbort{errMarkdownTooLarge})
	}
	w.Write(buf.Bytes())
	if buf.Cap() > markdownKeptBuffer {
		g.buffers[g.depth] = new(bytes.Buffer) // let the garbage collector have it
	} else {
		buf.Reset()
	}
	if b, ok := w.(interface{ Len() int }); ok && b.Len() > g.budget.element {
		panic(markdownAbort{errMarkdownTooLarge})
	}
	return converter.RenderSuccess
}
