//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/web"
)

// fakeHosts maps made-up names to addresses: the proxy's resolver seam, so
// that an "allowed host" is a test server and no test needs the Internet.
type fakeHosts map[string]string

func (f fakeHosts) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// runToFile runs script under b and p with its output in a file (so that
// the proxy's refusals are written beside it) and returns the output.
func runToFile(t *testing.T, b Backend, p Policy, script string) (string, error) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer out.Close()
	c, err := b.Command(Spec{Path: "/bin/bash", Args: []string{"-c", script}, Dir: p.Root,
		Env: []string{"PATH=/usr/bin:/bin", "TMPDIR=" + p.Tmp}}, p)
	require.NoError(t, err)
	c.Stdout, c.Stderr = out, out
	require.NoError(t, c.Start())
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		_ = c.Kill()
		<-done
		t.Fatal("the command did not end")
	}
	b2, _ := os.ReadFile(out.Name())
	return string(b2), err
}

// TestProxyAllowList is the allow-list's proof in every backend, per call
// and in a session: through the proxy the command reaches the allowed
// host (plain HTTP and HTTPS through CONNECT) and nothing else: another
// name, a raw IP in any spelling, a port not listed are refused with 403
// and a line in its errors; past the proxy the network stays closed.
func TestProxyAllowList(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "package index of %s", r.Host)
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "tarball over tls")
	}))
	defer secure.Close()
	// A server on every address of the host, for the direct probe.
	direct, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	defer direct.Close()
	go func() {
		_ = http.Serve(direct, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "direct") }))
	}()
	pp := strconv.Itoa(plain.Listener.Addr().(*net.TCPAddr).Port)
	sp := strconv.Itoa(secure.Listener.Addr().(*net.TCPAddr).Port)
	dp := strconv.Itoa(direct.Addr().(*net.TCPAddr).Port)
	hostIP := "127.0.0.1"
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
				hostIP = n.IP.String()
				break
			}
		}
	}

	hosts, err := web.ParseHostList([]string{"registry.test:" + pp, "registry.test:" + sp})
	require.NoError(t, err)
	proxy := web.NewProxy(&web.Dialer{Hosts: hosts, Resolver: fakeHosts{"registry.test": "127.0.0.1", "other.test": "127.0.0.1"},
		Private: func(h string) bool { return h == "registry.test" }}, 0, nil)

	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			root, tmp := t.TempDir(), t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(root, "f"), nil, 0o644))
			p := Policy{Mode: WorkspaceWrite, Root: root, Tmp: tmp, Proxy: proxy}
			code := `curl -sS -o /dev/null -w '%{http_code}' --max-time 20 `

			out, err := runToFile(t, b, p, `echo "$HTTP_PROXY $https_proxy $NO_PROXY"`)
			require.NoError(t, err, out)
			assert.Regexp(t, `^http://127\.0\.0\.1:\d+ http://127\.0\.0\.1:\d+ localhost,127\.0\.0\.1,::1`, out)

			out, err = runToFile(t, b, p, `curl -sS --max-time 20 http://registry.test:`+pp+`/`)
			require.NoError(t, err, out)
			assert.Equal(t, "package index of registry.test:"+pp, out)

			out, err = runToFile(t, b, p, `curl -sS -k --max-time 20 https://registry.test:`+sp+`/`)
			require.NoError(t, err, out)
			assert.Equal(t, "tarball over tls", out)

			for _, u := range []string{
				"http://other.test:" + pp + "/",                                 // a name not listed
				"http://registry.test:" + dp + "/",                              // a port not listed
				"http://127.0.0.1:" + pp + "/", "http://2130706433:" + pp + "/", // raw IPs, past NO_PROXY
				"http://[::1]:" + pp + "/", "http://" + hostIP + ":" + dp + "/", //
				"http://0x7f.1:" + pp + "/", "http://registry.test.evil:" + pp + "/", //
			} {
				out, err := runToFile(t, b, p, code+`--noproxy '' -x "$HTTP_PROXY" `+u)
				assert.NoError(t, err, out)
				assert.True(t, strings.HasPrefix(out, "llmtoolkit sandbox proxy: GET "), "%s: %s", u, out)
				assert.Contains(t, out, "refused", u)
				assert.True(t, strings.HasSuffix(out, "\n403"), "%s: %s", u, out)
			}
			for _, target := range []string{"other.test:443", "1.2.3.4:443", "[::1]:" + sp, "registry.test:22"} {
				out, err := runToFile(t, b, p, `curl -sS -o /dev/null --max-time 20 -p --noproxy "" -x "$HTTP_PROXY" http://`+target+`/`)
				assert.Error(t, err, out) // CONNECT refused: curl fails
				assert.Contains(t, out, "llmtoolkit sandbox proxy: CONNECT "+target+" refused", target)
				assert.Contains(t, out, "403", target)
			}

			// Past the proxy nothing is reached: no name resolves, no
			// address outside the namespace answers.
			for _, u := range []string{"http://registry.test:" + pp + "/", "http://" + hostIP + ":" + dp + "/", "http://127.0.0.1:" + pp + "/"} {
				out, err := runToFile(t, b, p, code+`--noproxy '*' --connect-timeout 3 `+u)
				assert.Error(t, err, "%s reached directly: %s", u, out)
			}
		})
	}
}

// TestProxyPolicyChecked: a proxy opens a closed network only.
func TestProxyPolicyChecked(t *testing.T) {
	hosts, err := web.ParseHostList([]string{"registry.test"})
	require.NoError(t, err)
	proxy := web.NewProxy(&web.Dialer{Hosts: hosts}, 0, nil)
	for name, b := range backends(t) {
		root, tmp := t.TempDir(), t.TempDir()
		_, err := b.Command(Spec{Path: "/bin/true", Dir: root}, Policy{Mode: WorkspaceWrite, Network: true, Root: root, Tmp: tmp, Proxy: proxy})
		assert.ErrorIs(t, err, ErrBadPolicy, name)
	}
}

// TestProxyEndsWithTheCommand: a command's proxy listener is closed once
// it has ended, in a session's shared namespace too: a later command
// cannot use an earlier one's proxy, and its own works.
func TestProxyEndsWithTheCommand(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	pp := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	hosts, err := web.ParseHostList([]string{"registry.test:" + pp})
	require.NoError(t, err)
	proxy := web.NewProxy(&web.Dialer{Hosts: hosts, Resolver: fakeHosts{"registry.test": "127.0.0.1"},
		Private: func(string) bool { return true }}, 0, nil)
	for name, b := range sessionBackends(t) {
		t.Run(name, func(t *testing.T) {
			p := Policy{Mode: WorkspaceWrite, Root: t.TempDir(), Tmp: t.TempDir(), Proxy: proxy}
			first, err := runToFile(t, b, p, `printf %s "$HTTP_PROXY"`)
			require.NoError(t, err, first)
			out, err := runToFile(t, b, p, `curl -sS --max-time 10 http://registry.test:`+pp+`/ && curl -sS --max-time 5 -x `+first+` http://registry.test:`+pp+`/`)
			assert.Error(t, err, "the first command's proxy still answers: %s", out)
			assert.True(t, strings.HasPrefix(out, "ok"), out)
			assert.Contains(t, out, "Couldn't connect", out)
		})
	}
}
