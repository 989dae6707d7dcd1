package codetools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/build"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/testkit"

	"github.com/llmtoolkit/llmtoolkit"
)

func newTestServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTPGetFormats(t *testing.T) {
	t.Parallel()
	var gotUA string
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		gotUA = r.UserAgent()
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><head><title>T</title><style>p{}</style></head><body><h1>Title</h1><p>Some <b>bold</b> text and <a href="/x">a link</a>.</p><script>evil()</script></body></html>`)
		case "/plain":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "just text")
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9"))
		case "/archive":
			w.Header().Set("Content-Type", "application/zip")
			w.Write([]byte("PK\x03\x04\x00\x00\x00\x00\x00\x00binary"))
		case "/redirect":
			http.Redirect(w, r, "/plain", http.StatusFound)
		case "/missing":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<p>No such page</p>")
		}
	})
	ct := newTools(t, WithAllowPrivateNetworks())
	tests := []struct {
		name, path, format string
		contains           []string
		absent             []string
	}{
		{"markdown", "/page", "", []string{"HTTP 200 OK · text/html; charset=utf-8 · ", "# Title", "**bold**", "[a link](" + srv.URL + "/x)"}, []string{"evil", "<p>"}},
		{"text", "/page", "text", []string{"Title", "Some bold text and a link."}, []string{"evil", "<b>", "**"}},
		{"raw", "/page", "raw", []string{"<h1>Title</h1>"}, nil},
		{"plain", "/plain", "", []string{"HTTP 200 OK · text/plain · 9B\n\njust text"}, nil},
		{"charset", "/latin1", "", []string{"café"}, nil},
		{"binary described", "/archive", "", []string{"Binary content (application/zip, 16B) is not shown"}, []string{"binary"}},
		{"redirect followed", "/redirect", "", []string{"just text", "from " + srv.URL + "/plain"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"url": srv.URL + tt.path}
			if tt.format != "" {
				args["format"] = tt.format
			}
			got, err := run(t, ct, "http_get", args)
			require.NoError(t, err)
			for _, s := range tt.contains {
				assert.Contains(t, got, s)
			}
			for _, s := range tt.absent {
				assert.NotContains(t, got, s)
			}
		})
	}
	assert.Equal(t, "llmtoolkit/"+version, gotUA)

	_, err := run(t, ct, "http_get", map[string]any{"url": srv.URL + "/missing"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP 404 Not Found")
	assert.Contains(t, err.Error(), "No such page")

	res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{Name: "http_get", Arguments: map[string]any{"url": srv.URL + "/plain"}})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, WebpagePayload{URL: srv.URL + "/plain", Status: 200, ContentType: "text/plain"},
		payloadOf[WebpagePayload](t, res, DisplayWebpage))
}

func TestHTTPGetEndlessBodyIsCut(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		line := []byte(strings.Repeat("x", 1023) + "\n")
		for r.Context().Err() == nil {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	})
	ct := newTools(t, WithAllowPrivateNetworks())
	got, err := run(t, ct, "http_get", map[string]any{"url": srv.URL, "maxBytes": 5000})
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(got, "\n\n[truncated at 5000 bytes]"), got[max(0, len(got)-100):])
	assert.Contains(t, got, "more than 4.9KB")
	assert.Less(t, len(got), 5200)
}

func TestHTTPGetGuard(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") })
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	hop := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+port+"/", http.StatusFound)
	})
	hopPort := hop.URL[strings.LastIndexByte(hop.URL, ':')+1:]

	ct := newTools(t) // guard on
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/", "http://[::1]:" + port + "/"} {
		_, err := run(t, ct, "http_get", map[string]any{"url": u})
		require.Error(t, err, u)
		assert.ErrorIs(t, err, ErrBlockedAddress, u)
		assert.Contains(t, err.Error(), "loopback")
	}

	// "localhost" is allowed by name; the redirect to 127.0.0.1 is not.
	ct = newTools(t, WithAllowedHosts("localhost"))
	_, err := run(t, ct, "http_get", map[string]any{"url": "http://localhost:" + hopPort + "/"})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrBlockedAddress)

	got, err := run(t, ct, "http_get", map[string]any{"url": "http://localhost:" + port + "/"})
	require.NoError(t, err)
	assert.Contains(t, got, "secret")

	ct = newTools(t, WithAllowPrivateNetworks())
	got, err = run(t, ct, "http_get", map[string]any{"url": hop.URL})
	require.NoError(t, err)
	assert.Contains(t, got, "secret")
}

func TestHTTPGetErrors(t *testing.T) {
	t.Parallel()
	ct := newTools(t, WithAllowPrivateNetworks(), WithHTTPTimeout(time.Second))
	for _, tt := range []struct{ url, want string }{
		{"ftp://example.com/", "only http:// and https://"},
		{"file:///etc/passwd", "only http:// and https://"},
		{"http://", "has no host"},
		{"::not a url", "not a valid URL"},
	} {
		_, err := run(t, ct, "http_get", map[string]any{"url": tt.url})
		require.Error(t, err, tt.url)
		assert.Contains(t, err.Error(), tt.want)
	}
	_, err := run(t, ct, "http_get", map[string]any{"url": "http://x", "format": "pdf"})
	assert.ErrorIs(t, err, llmtoolkit.ErrInvalidArguments)

	loop := 0
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		loop++
		http.Redirect(w, r, fmt.Sprintf("/r%d", loop), http.StatusFound)
	})
	_, err = run(t, ct, "http_get", map[string]any{"url": srv.URL})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stopped after 5 redirects")

	slow := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	_, err = run(t, ct, "http_get", map[string]any{"url": slow.URL})
	require.Error(t, err)
}

// httpGetChildEnv carries a httpGetChildSpec to the test binary re-executed
// by runHTTPGetChild.
const httpGetChildEnv = "LLMTOOLKIT_TEST_HTTP_GET_CHILD"

// httpGetChildSpec is one http_get call run in a child process, so that a
// blow-up is measured and killed instead of taking the test run down.
type httpGetChildSpec struct {
	Kind        string // see hostilePage
	Size        int    // page size in bytes
	MaxBytes    int
	HTTPTimeout time.Duration
	CtxTimeout  time.Duration // 0: none
}

type httpGetChildReport struct {
	AnswerLen  int
	HeaderLen  int    // the answer's first lines, before its first blank line
	ContentLen int    // the answer after them, truncation marker excepted
	Marker     string // the truncation marker ending the answer, if any
	Answer     string // head and tail of the answer
	Err        string
	Elapsed    time.Duration
	HWMKiB     int64 // peak resident memory of the child (VmHWM)
}

// TestHTTPGetChild is the child half of runHTTPGetChild; it is skipped in a
// normal run.
func TestHTTPGetChild(t *testing.T) {
	raw := os.Getenv(httpGetChildEnv)
	if raw == "" {
		t.Skip("runs only as a child of runHTTPGetChild")
	}
	var spec httpGetChildSpec
	require.NoError(t, json.Unmarshal([]byte(raw), &spec))
	page := testkit.HostilePage(spec.Kind, spec.Size)
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	u := srv.URL + "/"
	if spec.Kind == "empty-links" { // a long host: the port, with 600 leading zeros
		port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
		u = "http://127.0.0.1:" + strings.Repeat("0", 600) + port + "/"
	}
	ct := newTools(t, WithAllowPrivateNetworks(), WithHTTPTimeout(spec.HTTPTimeout))
	ctx := context.Background()
	if spec.CtxTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.CtxTimeout)
		defer cancel()
	}
	start := time.Now()
	got, err := ct.Resolve(ctx, llmtoolkit.Call{Name: "http_get", Arguments: map[string]any{"url": u, "maxBytes": spec.MaxBytes}})
	rep := httpGetChildReport{AnswerLen: len(got), Elapsed: time.Since(start), HWMKiB: procStatusKiB("self", "VmHWM")}
	if err != nil {
		rep.Err = err.Error()
	}
	if marker := fmt.Sprintf("\n\n[truncated at %d bytes]", spec.MaxBytes); strings.HasSuffix(got, marker) {
		rep.Marker = marker
	}
	if header, content, ok := strings.Cut(strings.TrimSuffix(got, rep.Marker), "\n\n"); ok {
		rep.HeaderLen, rep.ContentLen = len(header), len(content)
	}
	rep.Answer = got
	if len(got) > 400 {
		rep.Answer = got[:200] + "…" + got[len(got)-200:]
	}
	out, err := json.Marshal(rep)
	require.NoError(t, err)
	fmt.Printf("\nHTTPGETREPORT %s\n", out)
}

// procStatusKiB reads a "Vm…: N kB" line of /proc/PID/status; 0 when it
// cannot (not Linux, process gone).
func procStatusKiB(pid, field string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// runHTTPGetChild runs spec in a child process, killed after killAfter or
// once its resident memory passes memLimitKiB. killed says why it was killed
// ("" when it finished).
func runHTTPGetChild(t *testing.T, spec httpGetChildSpec, killAfter time.Duration, memLimitKiB int64) (rep httpGetChildReport, killed string) {
	t.Helper()
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHTTPGetChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), httpGetChildEnv+"="+string(raw))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var peakKiB int64
	pid := strconv.Itoa(cmd.Process.Pid)
	for killed == "" {
		select {
		case err := <-done:
			line := stdout.String()
			i := strings.LastIndex(line, "HTTPGETREPORT ")
			require.GreaterOrEqual(t, i, 0, "child failed: %v\n%s\n%s", err, line, stderr.String())
			line = line[i+len("HTTPGETREPORT "):]
			line = line[:strings.IndexByte(line, '\n')]
			require.NoError(t, json.Unmarshal([]byte(line), &rep))
			return rep, ""
		case <-tick.C:
			peakKiB = max(peakKiB, procStatusKiB(pid, "VmRSS"))
			switch {
			case time.Since(start) > killAfter:
				killed = fmt.Sprintf("still running after %v", killAfter)
			case memLimitKiB > 0 && peakKiB > memLimitKiB:
				killed = fmt.Sprintf("resident memory %d MiB passed %d MiB after %v", peakKiB>>10, memLimitKiB>>10, time.Since(start).Round(time.Millisecond))
			}
		}
	}
	_ = cmd.Process.Kill()
	<-done
	rep.Elapsed, rep.HWMKiB = time.Since(start), peakKiB
	return rep, killed
}

// TestHTTPGetHostilePagesBounded fetches pages whose Markdown is far larger
// or far costlier than their HTML (issue 12: a 1 MiB page of empty links
// under a long host gave an 89 MiB answer and took 726 MiB). The answer must
// stay within maxBytes, and the child's memory and time within bounds.
func TestHTTPGetHostilePagesBounded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("measures memory through /proc")
	}
	const MiB = 1 << 20
	for _, tt := range []struct {
		kind string
		size int
		// The page's Markdown is larger than maxBytes: the answer must end
		// with the truncation marker, or say it shows the page's text.
		cut bool
	}{
		{"empty-links", MiB, true}, {"empty-links", 10 * MiB, true},
		{"host-links", MiB, false}, {"host-links", 10 * MiB, false},
		{"deep-list", MiB, true}, {"deep-list", 10 * MiB, true},
		{"deep-quote", MiB, true},
		{"text-comments", MiB, false},
		{"spans", MiB, false},
	} {
		t.Run(fmt.Sprintf("%s/%dMiB", tt.kind, tt.size/MiB), func(t *testing.T) {
			if testing.Short() && tt.size > MiB {
				t.Skip("large page")
			}
			if tt.size > MiB {
				requireStress(t) // 1 MiB pages show the same bounds
			}
			t.Parallel() // each page in its own child process
			spec := httpGetChildSpec{Kind: tt.kind, Size: tt.size, MaxBytes: tt.size, HTTPTimeout: time.Minute}
			memLimitKiB := int64(64<<10 + 48*tt.size>>10) // 112 MiB for 1 MiB, 544 MiB for 10 MiB
			timeLimit := 15 * time.Second                 // generous: the machine may be loaded
			if tt.size > MiB {
				timeLimit = time.Minute
			}
			rep, killed := runHTTPGetChild(t, spec, 90*time.Second, 2<<20)
			t.Logf("answer %d bytes (header %d, content %d), %v, peak %d MiB", rep.AnswerLen, rep.HeaderLen, rep.ContentLen, rep.Elapsed.Round(time.Millisecond), rep.HWMKiB>>10)
			require.Empty(t, killed, "child killed")
			require.Empty(t, rep.Err)
			assert.LessOrEqual(t, rep.ContentLen, spec.MaxBytes, "content beyond maxBytes")
			assert.Less(t, rep.HeaderLen, 512, rep.Answer)
			assert.Equal(t, rep.AnswerLen, rep.HeaderLen+len("\n\n")+rep.ContentLen+len(rep.Marker))
			if tt.cut && !strings.Contains(rep.Answer[:min(len(rep.Answer), 200)], "Shown as plain text") {
				assert.NotEmpty(t, rep.Marker, "no truncation marker: %s", rep.Answer)
			}
			if !raceEnabled {
				assert.LessOrEqual(t, rep.HWMKiB, memLimitKiB, "peak memory")
				assert.Less(t, rep.Elapsed, timeLimit)
			}
		})
	}
}

// TestHTTPGetConversionStopsAtDeadline: the conversion of a costly page
// ends with the call, whether the caller's deadline or the HTTP timeout
// runs out first (issue 12: it ran 46 s past the timeout).
func TestHTTPGetConversionStopsAtDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("large page")
	}
	const deadline, grace = time.Second, 5 * time.Second
	for name, spec := range map[string]httpGetChildSpec{
		"http timeout": {HTTPTimeout: deadline},
		"ctx deadline": {HTTPTimeout: time.Minute, CtxTimeout: deadline},
	} {
		t.Run(name, func(t *testing.T) {
			spec.Kind, spec.Size, spec.MaxBytes = "deep-quote", 10<<20, 10<<20
			rep, killed := runHTTPGetChild(t, spec, 30*time.Second, 2<<20)
			t.Logf("%v, answer %d bytes, err %.200q", rep.Elapsed.Round(time.Millisecond), rep.AnswerLen, rep.Err)
			require.Empty(t, killed, "child killed")
			assert.Less(t, rep.Elapsed, deadline+grace)
			if rep.Err != "" {
				assert.Contains(t, rep.Err, "deadline exceeded")
			}
		})
	}
}

// TestHTTPGetErrorsHidePasswords: no error or answer of http_get shows the
// password of a URL (issue 11: the URL-parse and bad-scheme errors did,
// and they are traced).
func TestHTTPGetErrorsHidePasswords(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t"
	var srvURL string
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bad-location":
			w.Header().Set("Location", "http://u:"+secret+"@h:bad/")
			w.WriteHeader(http.StatusFound)
		case "/to-userinfo":
			http.Redirect(w, r, strings.Replace(srvURL, "http://", "http://u:"+secret+"@", 1)+"/plain", http.StatusFound)
		case "/plain":
			fmt.Fprint(w, "hello")
		default:
			http.NotFound(w, r)
		}
	})
	srvURL = srv.URL
	withPassword := strings.Replace(srv.URL, "http://", "http://user:"+secret+"@", 1)
	open := newTools(t, WithAllowPrivateNetworks(), WithHTTPTimeout(5*time.Second))
	guarded := newTools(t, WithHTTPTimeout(5*time.Second))

	for _, tt := range []struct {
		name, url string
		ct        *CodeTools
		want      string // in the error
	}{
		{"unparsable port", "http://user:" + secret + "@host:bad/", open, `url "http://user:xxxxx@host:bad/" is not a valid URL: invalid port ":bad" after host`},
		{"bad escape in the password", "http://user:s3%zzcr3t@host/", open, `url "http://user:xxxxx@host/" is not a valid URL: its user name or password`},
		{"space in the password", "http://user:s3 cr3t@host/", open, `url "http://user:xxxxx@host/" is not a valid URL`},
		{"control character", "http://user:" + secret + "@host/\x7f", open, "invalid control character"},
		{"bad scheme", "ftp://user:" + secret + "@host/", open, `url "ftp://user:xxxxx@host/": only http:// and https://`},
		{"opaque", "user:" + secret + "@host/x", open, `url "user:xxxxx@host/x": only http:// and https://`},
		{"no host", "http:user:" + secret + "@host", open, `url "http:xxxxx@host" has no host`},
		{"refused address", withPassword + "/", guarded, "http_get http://user:xxxxx@127.0.0.1:"},
		{"HTTP error", withPassword + "/missing", open, "HTTP 404 Not Found"},
		{"unparsable redirect", withPassword + "/bad-location", open, `failed to parse Location header "http://u:xxxxx@h:bad/"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(t, tt.ct, "http_get", map[string]any{"url": tt.url})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			for _, part := range []string{secret, "s3", "cr3t"} {
				assert.NotContains(t, err.Error(), part)
			}
		})
	}

	_, err := run(t, guarded, "http_get", map[string]any{"url": withPassword + "/"})
	assert.ErrorIs(t, err, ErrBlockedAddress, "the scrubbed error still wraps the sentinel")

	res := llmtoolkit.Execute(context.Background(), open, llmtoolkit.Call{Name: "http_get", Arguments: map[string]any{"url": srv.URL + "/to-userinfo"}})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "hello")
	assert.Contains(t, res.Content, "from http://u:xxxxx@127.0.0.1:")
	assert.NotContains(t, res.Content, secret)
	require.NotNil(t, res.Display)
	assert.NotContains(t, fmt.Sprint(res.Display.Payload), secret)
}

func TestScrubURLPasswords(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{`failed to parse Location header "http://u:s3cr3t@h:bad/": parse "http://u:s3cr3t@h:bad/": invalid port`,
			`failed to parse Location header "http://u:xxxxx@h:bad/": parse "http://u:xxxxx@h:bad/": invalid port`},
		{"see http://a:b@c and https://d:e@f/x", "see http://a:xxxxx@c and https://d:xxxxx@f/x"},
		{"http://u:p@ss@h?q", "http://u:xxxxx@h?q"},
		{"admin@example.com wrote http://host/x", "admin@example.com wrote http://host/x"},
		{"http://host:8080/x, mail me@x", "http://host:8080/x, mail me@x"},
		{"http://user@host/", "http://user@host/"},
		{"no URL here", "no URL here"},
		{"://", "://"},
	} {
		assert.Equal(t, tt.want, scrubURLPasswords(tt.in), tt.in)
	}
}

// FuzzHTTPGetURLHidesPassword: whatever the user name, password and rest of
// an http URL, the password shows neither in parseFetchURL's error nor in
// the URL it shows.
func FuzzHTTPGetURLHidesPassword(f *testing.F) {
	for _, seed := range [][3]string{
		{"user", "s3cr3t", "host/"}, {"user", "s3%zzcr3t", "host/"}, {"", "s3 cr3t", "host:bad/"},
		{"u", "p@ss:w0rd", "h/x?y#z"}, {"u", "pa\x7fss", "h"}, {"u", "[pass]", "h"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, user, pass, rest string) {
		// A password runs to the last "@" before the first "/", "?" or
		// "#"; user and rest must not move that end.
		if strings.ContainsAny(pass, `/?#\`) || strings.ContainsAny(user, `/?#\@`) || strings.Contains(rest, "@") {
			return
		}
		pass = "Q7" + pass + "Z9" // a password that nothing else in a message looks like
		quoted := strings.Trim(strconv.Quote(pass), `"`)
		raw := "http://" + user + ":" + pass + "@" + rest
		u, err := parseFetchURL(raw)
		if err != nil {
			for _, msg := range []string{err.Error(), scrubURLPasswords(err.Error())} {
				assert.NotContains(t, msg, pass, raw)
				assert.NotContains(t, msg, quoted, raw)
			}
			return
		}
		assert.NotContains(t, redactURL(u), pass, raw)
	})
}

// BenchmarkHTTPGetMarkdown fetches the Go specification (about 290 KB of
// HTML) from a local server and converts it to Markdown.
func BenchmarkHTTPGetMarkdown(b *testing.B) {
	page, err := os.ReadFile(filepath.Join(build.Default.GOROOT, "doc", "go_spec.html"))
	if err != nil {
		b.Skip("no go_spec.html in GOROOT")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}))
	b.Cleanup(srv.Close)
	ct := newTools(b, WithAllowPrivateNetworks())
	call := llmtoolkit.Call{Name: "http_get", Arguments: map[string]any{"url": srv.URL}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ct.Resolve(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}
