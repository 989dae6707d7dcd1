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
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html/charset"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/redact"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
	"github.com/llmtoolkit/llmtoolkit/internal/web"
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

// ErrBlockedAddress is wrapped by http_get's error for a connection its
// network guard refused: a loopback, private, link-local or otherwise
// non-public address, including an IPv6 address that embeds one (NAT64,
// 6to4, IPv4-compatible, SIIT). See [WithAllowPrivateNetworks] and
// [WithAllowedHosts].
var ErrBlockedAddress = errors.New("address not allowed")

// ErrNetworkClosed is wrapped by http_get's error when the sandbox policy
// closes the network ([WithSandbox] with SandboxPolicy.Network false): the
// switch governs every tool that reaches the network, not only bash.
var ErrNetworkClosed = errors.New("the network is closed by the sandbox policy (WithSandbox: SandboxPolicy.Network is false)")

// networkClosed reports whether the sandbox asked for closes the network
// (even when it could not run: the switch is the host's decision).
func (c *CodeTools) networkClosed() bool {
	s := c.cfg.bash.sandbox
	return s.Mode != SandboxOff && !s.Network
}

func (c *CodeTools) httpGetSpec() toolSpec {
	closed := ""
	switch {
	case c.networkClosed() && c.sbx.allow != nil:
		closed = "The network is closed here but for these hosts: " + strings.Join(c.sbx.allow.Hosts.Entries(), ", ") + " (a bare name: ports 80 and 443); every other host and every IP address is refused. "
	case c.networkClosed():
		closed = "The network is closed here: every call fails. "
	}
	return makeSpec("http_get", closed+
		"Fetch a web page or file over HTTP(S) with a GET request and return it: HTML as Markdown (default), or as plain text, or the raw body. "+
		"The first line states the status, content type and size. Bodies are cut at maxBytes (default 1 MiB, at most 10 MiB), and a body that stops early (closed or timed out) is shown as cut, with why; images (PNG, JPEG, GIF, WebP) and PDF documents are returned as they are, for you to look at; archives and other binary content are described, not shown. "+
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
	var dial func(ctx context.Context, network, addr string) (net.Conn, error)
	if c.networkClosed() && c.sbx.allow != nil {
		dial = c.sbx.allow.DialContext // the sandbox's allow-list: checked, resolved and guarded as the proxy's
	} else {
		dial = c.openDial()
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

// openDial is http_get's dial with the network open: public addresses,
// and the private ones WithAllowPrivateNetworks or WithAllowedHosts allow.
func (c *CodeTools) openDial() func(ctx context.Context, network, addr string) (net.Conn, error) {
	cfg := c.cfg.http
	plain := &net.Dialer{Timeout: 10 * time.Second}
	guarded := &net.Dialer{Timeout: 10 * time.Second, Control: web.DialControl(ErrBlockedAddress)}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		if cfg.allowPrivate || cfg.allowHosts[strings.ToLower(strings.TrimSuffix(host, "."))] {
			return plain.DialContext(ctx, network, addr)
		}
		return guarded.DialContext(ctx, network, addr)
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
	if c.networkClosed() && c.sbx.allow == nil {
		return "", fmt.Errorf("http_get refused: %w", ErrNetworkClosed)
	}
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
		if errors.Is(err, ErrHostNotAllowed) {
			return "", fmt.Errorf("http_get %s refused: %w (the sandbox's network is closed but for SandboxPolicy.AllowHosts)", u.Redacted(), unwrapURLError(err))
		}
		if errors.Is(err, ErrBlockedAddress) {
			return "", fmt.Errorf("http_get %s refused: %w (hosts may allow it with codetools.WithAllowPrivateNetworks or WithAllowedHosts)", u.Redacted(), unwrapURLError(err))
		}
		return "", fmt.Errorf("http_get %s: %w", u.Redacted(), unwrapURLError(err))
	}
	defer resp.Body.Close()

	head, bodyReader := sniffBody(resp.Body)
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		if out, isMedia, err := c.fetchMedia(ctx, u, resp, head, bodyReader); isMedia {
			return out, err
		}
	}
	body, readErr := io.ReadAll(io.LimitReader(bodyReader, int64(maxBytes)+1))
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
	textual := isTextual(body, params["charset"])
	if textual && !textType(mediatype) {
		// Text served under another type (an HTML page as image/png): it
		// is read, and converted, as what its content is.
		mediatype, params, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
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
		if textual {
			start = toUTF8(body, params["charset"])
			if isHTML {
				// Best effort: an error here leaves the text found so far.
				start, _ = web.Text(ctx, start)
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
	if !textual {
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
			content, err = web.Text(ctx, page)
		} else {
			content, cut, note, err = web.Markdown(ctx, page, final.Scheme+"://"+final.Host, maxBytes, toolPanic)
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
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayWebpage, Payload: WebpagePayload{
		URL: url, Status: status, ContentType: mediatype, Truncated: truncated,
	}})
}

// parseFetchURL parses http_get's url argument. Its errors show the URL
// with the password, if any, replaced by "xxxxx" (as url.URL.Redacted does).
func parseFetchURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		shown := redact.URLPassword(raw, "xxxxx")
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
		return redact.URLPassword(u.String(), "xxxxx")
	}
	return u.Redacted()
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

// isTextual tells text from binary by the body, as read_file does, never
// by the media type (images and PDFs are recognised before, by their first
// bytes): text has no NUL byte in its first [textutil.SniffLen] bytes,
// unless it starts with a UTF-16 byte-order mark or the response declares
// a UTF-16 or UTF-32 charset, which decodes it.
func isTextual(body []byte, charset string) bool {
	if !textutil.IsBinary(body) {
		return true
	}
	cs := strings.ToLower(charset)
	return strings.HasPrefix(cs, "utf-16") || strings.HasPrefix(cs, "utf-32") ||
		bytes.HasPrefix(body, []byte{0xfe, 0xff}) || bytes.HasPrefix(body, []byte{0xff, 0xfe})
}

// textType reports whether a media type names text, so that a text body
// served under it keeps it (its charset included).
func textType(mediatype string) bool {
	return strings.HasPrefix(mediatype, "text/") ||
		strings.HasSuffix(mediatype, "+json") || strings.HasSuffix(mediatype, "+xml") ||
		strings.HasSuffix(mediatype, "/json") || strings.HasSuffix(mediatype, "/xml") ||
		strings.HasSuffix(mediatype, "/javascript") || strings.HasSuffix(mediatype, "/ecmascript") ||
		mediatype == "application/x-www-form-urlencoded" || mediatype == "application/yaml" ||
		mediatype == "application/x-yaml" || mediatype == "application/toml" || mediatype == "application/x-sh"
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
