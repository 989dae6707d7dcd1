package codetools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/llmtoolkit/llmtoolkit"
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
)

func (c *CodeTools) httpGetSpec() toolSpec {
	return makeSpec("http_get",
		"Fetch a web page or file over HTTP(S) with a GET request and return it: HTML as Markdown (default), or as plain text, or the raw body. "+
			"The first line states the status, content type and size. Bodies are cut at maxBytes (default 1 MiB, at most 10 MiB); images, archives and other binary content are described, not shown. "+
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
	cfg := c.cfg.part2
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
	raw := strings.TrimSpace(stringArg(args, "url", ""))
	maxBytes := min(max(intArg(args, "maxBytes", httpDefaultMaxBytes), 1), httpHardMaxBytes)
	format := stringArg(args, "format", "markdown")
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("url %q is not a valid URL: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("url %q: only http:// and https:// URLs can be fetched", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("url %q has no host", raw)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("url %q: %w", raw, err)
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

	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(maxBytes)+1))
	if err != nil && len(body) == 0 {
		return "", fmt.Errorf("http_get %s: reading the body: %w", u.Redacted(), err)
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
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "webpage", Payload: map[string]any{
		"url": final.String(), "status": resp.StatusCode, "truncated": truncated,
	}})

	sizeText := textutil.HumanSize(int64(len(body)))
	if truncated {
		sizeText = "more than " + sizeText
	} else if resp.ContentLength > int64(len(body)) {
		sizeText = textutil.HumanSize(resp.ContentLength)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		start := ""
		if isTextual(mediatype, body) {
			start = toUTF8(body, params["charset"])
			if mediatype == "text/html" || mediatype == "application/xhtml+xml" {
				start = htmlText(start)
			}
			start = strings.TrimSpace(start)
			if utf8.RuneCountInString(start) > httpErrorBodyChars {
				start = string([]rune(start)[:httpErrorBodyChars]) + "..."
			}
		}
		msg := fmt.Sprintf("http_get %s: HTTP %s", final.Redacted(), resp.Status)
		if start != "" {
			msg += "\n\n" + start
		}
		return "", errors.New(msg)
	}

	header := fmt.Sprintf("HTTP %s · %s · %s", resp.Status, orUnknown(ctype), sizeText)
	if final.String() != u.String() {
		header += " · from " + final.Redacted()
	}
	if !isTextual(mediatype, body) {
		return fmt.Sprintf("%s\nBinary content (%s, %s) is not shown. Download it with bash (curl -o FILE URL) to work with it.", header, orUnknown(mediatype), sizeText), nil
	}
	var content string
	switch {
	case format == "raw":
		content = strings.ToValidUTF8(string(body), "\uFFFD")
	case mediatype == "text/html" || mediatype == "application/xhtml+xml":
		page := toUTF8(body, params["charset"])
		if format == "text" {
			content = htmlText(page)
		} else {
			md, err := htmltomarkdown.ConvertString(page, converter.WithDomain(final.Scheme+"://"+final.Host))
			if err != nil {
				content = htmlText(page)
			} else {
				content = md
			}
		}
	default:
		content = toUTF8(body, params["charset"])
	}
	out := header + "\n\n" + strings.TrimSpace(content)
	if truncated {
		out += fmt.Sprintf("\n\n[truncated at %d bytes]", maxBytes)
	}
	return out, nil
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
// style dropped, blank runs collapsed.
func htmlText(page string) string {
	z := html.NewTokenizer(strings.NewReader(page))
	var b strings.Builder
	skip := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return collapseBlankLines(b.String())
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
