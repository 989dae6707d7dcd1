package web

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonicalHost(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" for a refusal
	}{
		{"registry.npmjs.org", "registry.npmjs.org"},
		{"Registry.NPMJS.org.", "registry.npmjs.org"},
		{"ｒｅｇｉｓｔｒｙ.test", "registry.test"}, // full-width letters fold
		{"bücher.example", "xn--bcher-kva.example"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"localhost", "localhost"},
		{"a-b.c1", "a-b.c1"},
		{"", ""},
		{".", ""},
		{"a..b", ""},
		{"-a.b", ""},
		{"a_b.c", ""},
		{"a b.c", ""},
		{"a%2eb.c", ""},
		{"evil.com\x00.registry.test", ""},
		{"127.0.0.1", ""},
		{"127.1", ""},
		{"2130706433", ""},
		{"0x7f000001", ""},
		{"0x7f.0.0.1", ""},
		{"017700000001", ""},
		{"foo.0x", ""},
		{"1.2.3.4.", ""},
		{"::1", ""},
		{"[::1]", ""},
		{"::ffff:127.0.0.1", ""},
		{"fe80::1%eth0", ""},
		{"host:80", ""},
		{strings.Repeat("a", 64) + ".com", ""},
		{strings.Repeat("a.", 127) + "com", ""},
	} {
		got, err := CanonicalHost(tc.in)
		if tc.want == "" {
			assert.ErrorIs(t, err, ErrBadHost, "%q gave %q", tc.in, got)
			continue
		}
		if assert.NoError(t, err, tc.in) {
			assert.Equal(t, tc.want, got, tc.in)
		}
	}
}

func TestHostListCheck(t *testing.T) {
	l, err := ParseHostList([]string{"registry.test", "*.cdn.test", "exact.test:8443", "REGISTRY.test."})
	require.NoError(t, err)
	assert.Equal(t, []string{"registry.test", "*.cdn.test", "exact.test:8443"}, l.Entries())
	for _, tc := range []struct {
		host string
		port int
		ok   bool
	}{
		{"registry.test", 443, true},
		{"registry.test", 80, true},
		{"Registry.Test.", 443, true},
		{"registry.test", 22, false},
		{"a.registry.test", 443, false},
		{"evilregistry.test", 443, false},
		{"registry.test.evil", 443, false},
		{"files.cdn.test", 443, true},
		{"a.b.cdn.test", 80, true},
		{"cdn.test", 443, false},
		{"xcdn.test", 443, false},
		{"exact.test", 8443, true},
		{"exact.test", 443, false},
		{"127.0.0.1", 443, false},
		{"0x7f.1", 443, false},
	} {
		name, err := l.Check(tc.host, tc.port)
		if tc.ok {
			assert.NoError(t, err, "%s:%d", tc.host, tc.port)
			assert.Equal(t, strings.ToLower(strings.TrimSuffix(tc.host, ".")), name)
		} else {
			assert.Error(t, err, "%s:%d", tc.host, tc.port)
			assert.ErrorIs(t, err, ErrHostNotAllowed)
		}
	}
	for _, bad := range []string{"10.0.0.1", "https://registry.test/", "[::1]", "*.", "a:0", "a:99999", "a:+1"} {
		_, err := ParseHostList([]string{bad})
		assert.ErrorIs(t, err, ErrBadHost, bad)
		assert.Contains(t, err.Error(), strconv.Quote(bad))
	}
	var empty *HostList
	_, err = empty.Check("registry.test", 443)
	assert.ErrorIs(t, err, ErrHostNotAllowed)
}

// recordingResolver records the names it is asked and answers none.
type recordingResolver struct {
	mu    sync.Mutex
	asked []string
}

var errStop = errors.New("recording resolver: stop here")

func (r *recordingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, host)
	return nil, errStop
}

func (r *recordingResolver) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.asked
	r.asked = nil
	return out
}

// atonIPv4 is a reference reading of host as inet_aton (and the WHATWG URL
// parser) would read it: one to four numbers, decimal, octal or hex.
func atonIPv4(host string) bool {
	host = strings.TrimSuffix(host, ".")
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 0, 64); err != nil {
			return false
		}
	}
	return true
}

// refAllows is the list's rule written again, on the exact string the
// resolver was asked.
func refAllows(name string, port int) bool {
	switch {
	case name == "registry.test":
		return port == 80 || port == 443
	case strings.HasSuffix(name, ".cdn.test") && len(name) > len(".cdn.test"):
		return port == 80 || port == 443
	case name == "exact.test":
		return port == 8443
	}
	return false
}

// FuzzHostCheckVersusDial is the differential test of the allow-list's
// check and the dial: for any host, through the Dialer and through
// net/http's transport (http_get's path), the resolver is asked at most
// one name, exactly the canonical name the check allowed, which the list
// allows as written; an IP address in any spelling is never resolved.
func FuzzHostCheckVersusDial(f *testing.F) {
	for _, s := range []string{"registry.test", "REGISTRY.test.", "registry.test..", "127.0.0.1", "0x7f.1",
		"2130706433", "[::1]", "registry.test%00", "xn--rgistry-fya.test", "régistry.test", "ｒｅｇｉｓｔｒｙ.test",
		"a.cdn.test", "cdn.test", "registry.test.evil", "evilregistry.test", "exact.test", "1.2.3.4.", "%72egistry.test"} {
		f.Add(s, uint16(443))
		f.Add(s, uint16(8443))
	}
	l, err := ParseHostList([]string{"registry.test", "*.cdn.test", "exact.test:8443"})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, host string, port uint16) {
		if port == 0 {
			port = 443
		}
		res := &recordingResolver{}
		d := &Dialer{Hosts: l, Resolver: res}
		canon, checkErr := l.Check(host, int(port))
		if checkErr == nil {
			again, err := CanonicalHost(canon)
			require.NoError(t, err)
			require.Equal(t, canon, again, "canonical form is stable")
		}
		_, dialErr := d.DialContext(context.Background(), "tcp", net.JoinHostPort(host, strconv.Itoa(int(port))))
		asked := res.take()
		if checkErr != nil {
			require.Empty(t, asked, "a refused host %q was resolved", host)
			require.Error(t, dialErr)
		} else {
			require.Equal(t, []string{canon}, asked, "the dial resolves the name checked")
			require.ErrorIs(t, dialErr, errStop)
		}
		for _, n := range asked {
			require.True(t, refAllows(n, int(port)), "resolved %q on port %d, which the list does not allow", n, port)
			require.False(t, atonIPv4(n), "resolved an IPv4 address %q", n)
			_, err := netip.ParseAddr(n)
			require.Error(t, err, "resolved an IP address %q", n)
		}
		if atonIPv4(host) {
			require.Error(t, checkErr, "%q reads as an IPv4 address", host)
		}

		// http_get's path: the URL is parsed and net/http dials its host.
		u := "http://" + net.JoinHostPort(host, strconv.Itoa(int(port))) + "/"
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return
		}
		client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, Proxy: nil}}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("no resolver answer, yet %s was fetched", u)
		}
		asked = res.take()
		want, werr := l.Check(req.URL.Hostname(), int(port))
		if werr != nil {
			require.Empty(t, asked, "http: %q refused by the check, yet resolved", req.URL.Hostname())
			return
		}
		require.Equal(t, []string{want}, asked, "http: the name resolved is the one checked")
	})
}
