package codetools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/redact"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// version is llmtoolkit's version as sent in http_get's User-Agent.
// (To move to the root package's Version constant.)
const version = "0.1.0"

const userAgent = "llmtoolkit/" + version

const (
	httpDefaultMaxBytes = 1 << 20
	httpHardMaxBytes    = 10 << 20
	httpErrorBodyChars  = 500
	// httpMaxURLChars caps a URL shown in an answer (a redirect target can
	// be as long as the response headers).
	httpMaxURLChars = 2048
)

func (c *CodeTools) httpGetSpec() toolSpec {
	return makeSpec("http_get",
		"Fetch a web page or file over HTTP(S) with a GET request and return it: HTML as Markdown (default), or as plain text, or the raw body. "+
			"The first line states the status, content type and size. Bodies are cut at maxBytes (default 1 MiB, at most 10 MiB), and a body that stops early (closed or timed out) is shown as cut, with why; images, archives and other binary content are described, not shown. "+
			"Only http and https URLs; at most 5 redirects; local and private network addresses are refused. A non-2xx status is an error with the start of the body. "+
			"Use http_get to read documentation, issues or APIs on the web; use read_file for files in the working directory.",
		map[string]any{
			"type": "object",
			"properties": map[string]any{
				"url":      map[string]any{"type": "string", "minLength": 1, "description": "Absolute http:// or https:// URL to fetch."},
				"maxBytes": map[string]any{"type": "integer", "minimum": 1, "maximum": httpHardMaxBytes, "description": "Maximum number of body bytes to read. Default: 1048576 (1 MiB), at most 10485760 (10 MiB)."},
				"format":   map[string]any{"type": "string", "enum": []any{"markdown", "text", "raw"}, "description": "How to return HTML: \"markdown\" (default), \"text\" (tags stripped) or \"raw\" (the body as received)."},
			},
			"required":             []any{"url"},
			"additionalProperties": false,
		}, llmtoolkit.Annotations{ReadOnly: true, OpenWorld: true}, c.httpGet)
}

// httpClient builds the client: no proxy (it would hide the address dialled
// from the guard), the guard in the dialer, bounded redirects.
func (c *CodeTools) httpClient() *http.Client {
	cfg := c.cfg.http
	plain := &net.Dialer{Timeout: 10 * time.Second}
	guarded := &net.Dialer{Timeout: 10 * time.Second, Control: guardControl}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		if cfg.allowPrivate || cfg.allowHosts[strings.ToLower(strings.TrimSuffix(host, "."))] {
			return plain.DialContext(ctx, network, addr)
		}
		return guarded.DialContext(ctx, network, addr)
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dial,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: cfg.httpTimeout,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   cfg.httpTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > cfg.httpMaxRedirects {
				return fmt.Errorf("stopped after %d redirects", cfg.httpMaxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to %q refused: only http and https are allowed", req.URL.Redacted())
			}
			return nil
		},
	}
}

func (c *CodeTools) httpGet(ctx context.Context, args map[string]any) (string, error) {
	out, err := c.fetch(ctx, args)
	if err != nil {
		// Passwords in URLs are secrets: none reaches an error, even one
		// quoted from the server (a Location header) or from the net stack.
		return "", scrubbedError{msg: scrubURLPasswords(err.Error()), err: err}
	}
	return out, nil
}

// fetch is http_get without the final scrub of its error.
func (c *CodeTools) fetch(ctx context.Context, args map[string]any) (string, error) {
	raw := strings.TrimSpace(stringArg(args, "url", ""))
	maxBytes := min(max(intArg(args, "maxBytes", httpDefaultMaxBytes), 1), httpHardMaxBytes)
	format := stringArg(args, "format", "markdown")
	u, err := parseFetchURL(raw)
	if err != nil {
		return "", err
	}
	// The timeout covers the whole call: the request, the body and the
	// conversion.
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, c.cfg.http.httpTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("url %q: %w", u.Redacted(), unwrapURLError(err))
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown,text/plain,application/json;q=0.9,*/*;q=0.8")
	client := c.httpClient()
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, ErrBlockedAddress) {
			return "", fmt.Errorf("http_get %s refused: %w (hosts may allow it with codetools.WithAllowPrivateNetworks or WithAllowedHosts)", u.Redacted(), unwrapURLError(err))
		}
		return "", fmt.Errorf("http_get %s: %w", u.Redacted(), unwrapURLError(err))
	}
	defer resp.Body.Close()

	body, readErr := io.ReadAll(io.LimitReader(resp.Body, int64(maxBytes)+1))
	if readErr != nil && (len(body) == 0 || caller.Err() != nil) {
		return "", fmt.Errorf("http_get %s: reading the body: %w", u.Redacted(), readErr)
	}
	truncated := len(body) > maxBytes
	if truncated {
		body = body[:maxBytes]
	}
	ctype := resp.Header.Get("Content-Type")
	if ctype == "" {
		ctype = http.DetectContentType(body)
	}
	mediatype, params, _ := mime.ParseMediaType(ctype)
	final := resp.Request.URL
	finalText := textutil.CutUTF8(final.Redacted(), httpMaxURLChars)

	sizeText := textutil.HumanSize(int64(len(body)))
	// cutNote says why a body that stopped early (a connection closed
	// before its Content-Length, the HTTP timeout while it trickled in)
	// is not whole: such a body is always shown as cut, with its error.
	cutNote := ""
	switch {
	case readErr != nil && !truncated:
		sizeText += " received, cut"
		announced := ""
		if resp.ContentLength > int64(len(body)) {
			sizeText += " (" + textutil.HumanSize(resp.ContentLength) + " announced)"
			announced = " of the " + textutil.HumanSize(resp.ContentLength) + " announced"
		}
		cutNote = fmt.Sprintf("[cut: the body stopped after %s%s: %v; the rest was not received]",
			textutil.HumanSize(int64(len(body))), announced, unwrapURLError(readErr))
	case truncated:
		sizeText = "more than " + sizeText
	case resp.ContentLength > int64(len(body)):
		sizeText = textutil.HumanSize(resp.ContentLength)
	}
	short := cutNote != ""
	isHTML := mediatype == "text/html" || mediatype == "application/xhtml+xml"
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		showWebpage(ctx, finalText, resp.StatusCode, mediatype, truncated || short)
		start := ""
		if isTextual(mediatype, body) {
			start = toUTF8(body, params["charset"])
			if isHTML {
				// Best effort: an error here leaves the text found so far.
				start, _ = htmlText(ctx, start)
			}
			start = strings.TrimSpace(start)
			if utf8.RuneCountInString(start) > httpErrorBodyChars {
				start = string([]rune(start)[:httpErrorBodyChars]) + "..."
			}
		}
		msg := fmt.Sprintf("http_get %s: HTTP %s", finalText, resp.Status)
		if start != "" {
			msg += "\n\n" + start
		}
		if short {
			msg += "\n\n" + cutNote
		}
		return "", errors.New(msg)
	}

	header := fmt.Sprintf("HTTP %s · %s · %s", resp.Status, orUnknown(ctype), sizeText)
	if final.String() != u.String() {
		header += " · from " + finalText
	}
	if !isTextual(mediatype, body) {
		showWebpage(ctx, finalText, resp.StatusCode, mediatype, truncated || short)
		return fmt.Sprintf("%s\nBinary content (%s, %s) is not shown. Download it with bash (curl -o FILE URL) to work with it.", header, orUnknown(mediatype), sizeText), nil
	}
	var content string
	switch {
	case format == "raw":
		content = strings.ToValidUTF8(string(body), "\uFFFD")
	case isHTML:
		page := toUTF8(body, params["charset"])
		body = nil // the page holds it now
		var cut bool
		var note string
		if short && ctx.Err() != nil {
			return "", fmt.Errorf("http_get %s: the body was still arriving at the HTTP timeout (%v), after %s, which left no time to convert the page; "+
				"ask for format \"raw\" to see what arrived, or raise the timeout (codetools.WithHTTPTimeout)", u.Redacted(), c.cfg.http.httpTimeout, textutil.HumanSize(int64(len(page))))
		}
		if format == "text" {
			content, err = htmlText(ctx, page)
		} else {
			content, cut, note, err = pageMarkdown(ctx, page, final.Scheme+"://"+final.Host, maxBytes)
		}
		switch {
		case err == nil:
		case caller.Err() != nil:
			return "", fmt.Errorf("http_get %s: converting the page stopped with the call: %w", u.Redacted(), err)
		case errors.Is(err, context.DeadlineExceeded):
			return "", fmt.Errorf("http_get %s: converting the page took longer than the HTTP timeout (%v): %w", u.Redacted(), c.cfg.http.httpTimeout, err)
		default:
			return "", fmt.Errorf("http_get %s: converting the page: %w", u.Redacted(), err)
		}
		truncated = truncated || cut
		if note != "" {
			header += "\n" + note
		}
	default:
		content = toUTF8(body, params["charset"])
	}
	content = strings.TrimSpace(content)
	if len(content) > maxBytes {
		content, truncated = textutil.CutUTF8(content, maxBytes), true
	}
	showWebpage(ctx, finalText, resp.StatusCode, mediatype, truncated || short)
	out := header + "\n\n" + content
	if truncated {
		out += fmt.Sprintf("\n\n[truncated at %d bytes]", maxBytes)
	}
	if short {
		out += "\n\n" + cutNote
	}
	return out, nil
}

// showWebpage attaches http_get's Display payload.
func showWebpage(ctx context.Context, url string, status int, mediatype string, truncated bool) {
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: KindWebpage, Payload: WebpagePayload{
		URL: url, Status: status, ContentType: mediatype, Truncated: truncated,
	}})
}

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

// pageMarkdown converts page to Markdown, with links made absolute against
// domain, in work and memory bounded by maxBytes. When the page is too
// large, a shorter prefix of it is converted (cut is true, note says so);
// when even that fails, the page is too intricate, or it cannot be parsed,
// the page's plain text is returned and note says why.
//
// It returns as soon as ctx ends: the conversion runs in a goroutine of its
// own, which stops at its next check of ctx (each element, at most a few
// times maxBytes of work).
func pageMarkdown(ctx context.Context, page, domain string, maxBytes int) (md string, cut bool, note string, err error) {
	// Written by the goroutine only, read only once it has sent its error.
	var r struct {
		md, note string
		cut      bool
	}
	done := goGuarded("http_get conversion", func() (err error) {
		r.md, r.cut, r.note, err = convertPage(ctx, page, domain, maxBytes)
		return err
	})
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

// convertPage is pageMarkdown, in the caller's goroutine.
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
			text, err2 := htmlText(ctx, page)
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
	doc, err := html.Parse(ctxReader{ctx, strings.NewReader(page)})
	if err != nil {
		return "", 0, err
	}
	guard := &markdownGuard{ctx: ctx, budget: budget}
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), guard))
	defer func() {
		if r := recover(); r != nil {
			abort, ok := r.(markdownAbort)
			if !ok {
				abort.err = fmt.Errorf("panic: %v", r)
			}
			md, started, err = "", guard.pageElements(guard.elements), abort.err
		}
	}()
	out, err := conv.ConvertNode(doc, converter.WithContext(ctx), converter.WithDomain(domain))
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return "", guard.pageElements(guard.elements), err
	}
	return string(out), guard.elements, nil
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

// parseFetchURL parses http_get's url argument. Its errors show the URL
// with the password, if any, replaced by "xxxxx" (as url.URL.Redacted does).
func parseFetchURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		shown := scrubRawURL(raw)
		// The reason comes from the scrubbed text too, since url.Parse
		// quotes what it stumbled on, which may be part of the password.
		if _, err := url.Parse(shown); err != nil {
			return nil, fmt.Errorf("url %q is not a valid URL: %w", shown, unwrapURLError(err))
		}
		return nil, fmt.Errorf("url %q is not a valid URL: its user name or password holds characters a URL cannot (percent-encode them, for example @ as %%40)", shown)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q: only http:// and https:// URLs can be fetched", redactURL(u))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("url %q has no host", redactURL(u))
	}
	return u, nil
}

// redactURL is u.Redacted, which also covers opaque URLs such as
// "user:password@host" that have no user info for url.URL.
func redactURL(u *url.URL) string {
	if u.Opaque != "" {
		return scrubRawURL(u.String())
	}
	return u.Redacted()
}

// scrubRawURL replaces with "xxxxx" what may be a password in s, a URL that
// may not parse: all from the first ":" after the scheme's "//" (or after
// the start when there is none) to the last "@". It errs towards hiding too
// much.
func scrubRawURL(s string) string {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 && i == strings.IndexByte(s, ':') {
		start = i + len("://")
	}
	at := strings.LastIndexByte(s[start:], '@')
	if at < 0 {
		return s
	}
	colon := strings.IndexByte(s[start:start+at], ':')
	if colon < 0 {
		return s
	}
	return s[:start+colon+1] + "xxxxx" + s[start+at:]
}

// scrubURLPasswords replaces with "xxxxx" (as url.URL.Redacted does) the
// password of every URL in msg; see redact.URLPasswords.
func scrubURLPasswords(msg string) string { return redact.URLPasswords(msg, "xxxxx") }

// scrubbedError stands for an error whose text held a URL password: it
// carries the scrubbed text, and unwraps to what the original wrapped, so
// errors.Is and errors.As work as before.
type scrubbedError struct {
	msg string
	err error
}

func (e scrubbedError) Error() string { return e.msg }

func (e scrubbedError) Unwrap() []error {
	var errs []error
	switch w := e.err.(type) {
	case interface{ Unwrap() error }:
		errs = []error{w.Unwrap()}
	case interface{ Unwrap() []error }:
		errs = w.Unwrap()
	}
	return slices.DeleteFunc(errs, func(err error) bool { return err == nil })
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// unwrapURLError drops *url.Error's repetition of method and URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// isTextual tells text from binary content by media type, then by sniffing.
func isTextual(mediatype string, body []byte) bool {
	switch {
	case strings.HasPrefix(mediatype, "text/"),
		strings.HasSuffix(mediatype, "+json"), strings.HasSuffix(mediatype, "+xml"),
		strings.HasSuffix(mediatype, "/json"), strings.HasSuffix(mediatype, "/xml"),
		strings.HasSuffix(mediatype, "/javascript"), strings.HasSuffix(mediatype, "/ecmascript"),
		mediatype == "application/x-www-form-urlencoded", mediatype == "application/yaml",
		mediatype == "application/x-yaml", mediatype == "application/toml", mediatype == "application/x-sh":
		return true
	case strings.HasPrefix(mediatype, "image/"), strings.HasPrefix(mediatype, "audio/"),
		strings.HasPrefix(mediatype, "video/"), strings.HasPrefix(mediatype, "font/"):
		return false
	case mediatype == "" || mediatype == "application/octet-stream":
		sniff := body[:min(len(body), 8192)]
		return bytes.IndexByte(sniff, 0) < 0 && utf8.Valid(trimPartialRune(sniff))
	}
	return false
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < 3 && len(b) > 0; i++ {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size != 1 {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

// toUTF8 decodes body from its declared charset (UTF-8 when unknown).
func toUTF8(body []byte, label string) string {
	if label != "" && !strings.EqualFold(label, "utf-8") && !strings.EqualFold(label, "utf8") {
		if r, err := charset.NewReaderLabel(label, bytes.NewReader(body)); err == nil {
			if b, err := io.ReadAll(r); err == nil {
				return string(b)
			}
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// htmlText returns the text of an HTML document: tags stripped, script and
// style dropped, blank runs collapsed. It stops when ctx ends.
func htmlText(ctx context.Context, page string) (string, error) {
	z := html.NewTokenizer(strings.NewReader(page))
	var b strings.Builder
	skip := 0
	for tokens := 1; ; tokens++ {
		if tokens%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return collapseBlankLines(b.String()), nil
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			start := tt == html.StartTagToken
			switch tag {
			case "script", "style", "noscript", "template", "svg":
				if start {
					skip++
				} else if skip > 0 {
					skip--
				}
			case "p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "section", "article", "header", "footer", "table", "ul", "ol", "blockquote":
				b.WriteByte('\n')
			}
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		}
	}
}

func collapseBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	blank := 0
	for _, l := range lines {
		l = strings.TrimSpace(strings.Join(strings.Fields(l), " "))
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
