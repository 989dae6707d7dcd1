package web

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FakeResolver maps made-up names to addresses, so that tests reach their
// own servers under names an allow-list lists, without DNS.
type fakeResolver map[string]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// startProxy serves p on a loopback listener until the test ends and
// returns its URL and the refusals it told.
func startProxy(t *testing.T, p *Proxy) (*url.URL, func() []string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var refusals []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Serve(ctx, l, func(m string) { mu.Lock(); refusals = append(refusals, m); mu.Unlock() })
	}()
	t.Cleanup(func() { cancel(); <-done })
	u, _ := url.Parse("http://" + l.Addr().String())
	return u, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), refusals...) }
}

func TestProxyReachesOnlyTheList(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "plain %s %s", r.Host, r.URL.Path)
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "secure %s", r.URL.Path)
	}))
	defer secure.Close()
	plainPort := plain.Listener.Addr().(*net.TCPAddr).Port
	securePort := secure.Listener.Addr().(*net.TCPAddr).Port

	hosts, err := ParseHostList([]string{"registry.test:" + strconv.Itoa(plainPort), "registry.test:" + strconv.Itoa(securePort), "private.test:" + strconv.Itoa(plainPort)})
	require.NoError(t, err)
	d := &Dialer{Hosts: hosts, Resolver: fakeResolver{"registry.test": "127.0.0.1", "other.test": "127.0.0.1", "private.test": "127.0.0.1"},
		Private: func(h string) bool { return h == "registry.test" }}
	proxyURL, refusals := startProxy(t, NewProxy(d, 0, nil))

	pool := secure.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxyURL),
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"}, // httptest's certificate names example.com
	}}
	get := func(u string) (int, string) {
		resp, err := client.Get(u)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	code, body := get(fmt.Sprintf("http://registry.test:%d/pkg", plainPort))
	assert.Equal(t, 200, code, body)
	assert.Equal(t, fmt.Sprintf("plain registry.test:%d /pkg", plainPort), body)

	code, body = get(fmt.Sprintf("https://registry.test:%d/tarball", securePort))
	assert.Equal(t, 200, code, body)
	assert.Equal(t, "secure /tarball", body)

	for _, u := range []string{
		fmt.Sprintf("http://other.test:%d/", plainPort),      // not listed
		fmt.Sprintf("https://other.test:%d/", securePort),    // not listed, through CONNECT
		fmt.Sprintf("http://127.0.0.1:%d/", plainPort),       // a raw IP
		fmt.Sprintf("https://127.0.0.1:%d/", securePort),     // a raw IP, through CONNECT
		fmt.Sprintf("http://2130706433:%d/", plainPort),      // an IP in another spelling
		fmt.Sprintf("http://registry.test:%d/", plainPort+1), // a port not listed
		fmt.Sprintf("http://private.test:%d/", plainPort),    // listed, but resolves to loopback
	} {
		code, body := get(u)
		if code != 0 {
			assert.Equal(t, http.StatusForbidden, code, "%s: %s", u, body)
			assert.Contains(t, body, "refused", u)
		} else {
			assert.Contains(t, body, "Forbidden", u) // CONNECT refusals surface as the client's error
		}
	}
	got := refusals()
	assert.Len(t, got, 7, "%q", got)
	if len(got) == 7 {
		assert.Contains(t, got[0], "other.test")
		assert.Contains(t, got[0], "not in the network allow-list")
		assert.Contains(t, got[2], "an IP address")
		assert.Contains(t, got[6], "loopback")
	}

	// An origin-form request is not a proxy request.
	resp, err := http.Get(proxyURL.String() + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

func TestProxyBoundsConnections(t *testing.T) {
	hosts, err := ParseHostList([]string{"registry.test"})
	require.NoError(t, err)
	proxyURL, refusals := startProxy(t, NewProxy(&Dialer{Hosts: hosts, Resolver: fakeResolver{}}, 2, nil))
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for range 2 { // two idle connections hold both slots
		c, err := net.Dial("tcp", proxyURL.Host)
		require.NoError(t, err)
		open = append(open, c)
	}
	time.Sleep(50 * time.Millisecond)
	c, err := net.Dial("tcp", proxyURL.Host)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(b), "too many connections")
	assert.Len(t, refusals(), 1)

	open[0].Close() // a slot is given back
	open = open[1:]
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", proxyURL.Host)
		if err != nil {
			return false
		}
		defer c.Close()
		fmt.Fprintf(c, "CONNECT nowhere.test:443 HTTP/1.1\r\nHost: nowhere.test:443\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		return err == nil && resp.StatusCode == http.StatusForbidden
	}, 5*time.Second, 50*time.Millisecond)
}

func TestProxyServeEndsItsTunnels(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	port := echo.Addr().(*net.TCPAddr).Port
	hosts, err := ParseHostList([]string{"echo.test:" + strconv.Itoa(port)})
	require.NoError(t, err)
	p := NewProxy(&Dialer{Hosts: hosts, Resolver: fakeResolver{"echo.test": "127.0.0.1"}, Private: func(string) bool { return true }}, 0, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Serve(ctx, l, nil) }()

	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT echo.test:%d HTTP/1.1\r\nHost: echo.test\r\n\r\nhello", port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	buf := make([]byte, 5)
	_, err = io.ReadFull(br, buf)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(buf))

	cancel() // the command is gone: its tunnels end with it
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = br.ReadByte()
	assert.ErrorIs(t, err, io.EOF)
	_, err = net.Dial("tcp", l.Addr().String())
	assert.Error(t, err, "the listener is closed")
}
