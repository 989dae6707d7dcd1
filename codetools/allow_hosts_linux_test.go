//go:build linux

package codetools

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// fakeDNS maps made-up names to addresses (the allow-list's resolver seam).
type fakeDNS map[string]string

func (f fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestSandboxAllowHosts: with SandboxPolicy.AllowHosts, bash's commands
// (through the proxy, in both backends, per call and in the session's
// sandbox) and http_get reach the listed host and nothing else: another
// name and raw IPs are refused, by the same list.
func TestSandboxAllowHosts(t *testing.T) {
	needProgram(t, "curl")
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			http.Redirect(w, r, "http://other.test:"+r.URL.Port()+"/", http.StatusFound)
			return
		}
		fmt.Fprintf(w, "index of %s", r.Host)
	}))
	defer registry.Close()
	port := strconv.Itoa(registry.Listener.Addr().(*net.TCPAddr).Port)
	dns := fakeDNS{"registry.test": "127.0.0.1", "other.test": "127.0.0.1"}

	type setup struct {
		backend string
		session bool
	}
	var setups []setup
	for _, b := range []string{"bubblewrap", "landlock"} {
		if _, err := sandbox.ByName(b); err != nil {
			t.Logf("%s not tested: %v", b, err)
			continue
		}
		setups = append(setups, setup{b, false})
		if b == "bubblewrap" || os.Geteuid() == 0 { // Landlock's session network needs root
			setups = append(setups, setup{b, true})
		}
	}
	if len(setups) == 0 {
		t.Skip("no sandbox backend here")
	}
	for _, s := range setups {
		t.Run(fmt.Sprintf("%s/session=%v", s.backend, s.session), func(t *testing.T) {
			opts := []Option{
				WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: s.backend, AllowHosts: []string{"registry.test:" + port}}),
				WithSandboxRequired(), WithAllowedHosts("registry.test"), withResolver(dns),
			}
			if s.session {
				opts = append(opts, WithSessionSandbox(), WithBackgroundJobs(), WithTerminals())
			}
			_, c := newTestTools(t, opts...)
			assert.Contains(t, c.Sandbox(), "hosts registry.test:"+port+" through a proxy")
			bash, _ := c.LookupTool("bash")
			assert.Contains(t, bash.Description, "Only these hosts are reached")
			get, _ := c.LookupTool("http_get")
			assert.Contains(t, get.Description, "closed here but for these hosts: registry.test:"+port)

			out := mustRun(t, c, "bash", map[string]any{"command": "curl -sS --max-time 20 http://registry.test:" + port + "/"})
			assert.Equal(t, "index of registry.test:"+port, out)
			for _, u := range []string{"http://other.test:" + port + "/", "http://127.0.0.1:" + port + "/", "http://[::1]:" + port + "/"} {
				out, err := run(t, c, "bash", map[string]any{"command": `curl -sS -o /dev/null -w '%{http_code}' --max-time 20 --noproxy '' -x "$HTTP_PROXY" ` + u})
				assert.NoError(t, err, out)
				assert.Contains(t, out, "llmtoolkit sandbox proxy: GET "+u+" refused", u)
				assert.Contains(t, out, "403", u)
			}
			out, err := run(t, c, "bash", map[string]any{"command": "curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:" + port + "/"})
			assert.Error(t, err, "reached directly: %s", out)

			if s.session { // a background job and a terminal (a sandbox of its own) too
				started := mustRun(t, c, "bash", map[string]any{"command": "curl -sS --max-time 20 http://registry.test:" + port + "/; curl -sS -o /dev/null --max-time 20 http://other.test:" + port + "/", "run_in_background": true})
				end := started + mustRun(t, c, "job_output", map[string]any{"job_id": jobID(t, started), "wait_seconds": 30, "until_exit": true})
				assert.Contains(t, end, "index of registry.test:"+port)
				assert.Contains(t, end, "llmtoolkit sandbox proxy: GET http://other.test:"+port+"/ refused")
				term := mustRun(t, c, "exec_command", map[string]any{"cmd": "curl -sS --max-time 20 http://registry.test:" + port + "/; echo; curl -sS -o /dev/null -w '%{http_code}' http://other.test:" + port + "/", "tty": true, "yield_time_ms": 20000})
				assert.Contains(t, term, "index of registry.test:"+port)
				assert.Contains(t, term, "403")
			}

			// http_get follows the same list.
			out = mustRun(t, c, "http_get", map[string]any{"url": "http://registry.test:" + port + "/", "format": "raw"})
			assert.Contains(t, out, "index of registry.test:"+port)
			for _, u := range []string{"http://other.test:" + port + "/", "http://127.0.0.1:" + port + "/", "http://2130706433:" + port + "/",
				"http://registry.test:" + port + "/elsewhere", "http://registry.test/"} {
				out, err := run(t, c, "http_get", map[string]any{"url": u})
				assert.ErrorIs(t, err, ErrHostNotAllowed, "%s: %s", u, out)
			}
		})
	}
}

// TestSandboxAllowHostsChecked: New refuses an allow-list it cannot hold.
func TestSandboxAllowHostsChecked(t *testing.T) {
	for name, p := range map[string]SandboxPolicy{
		"network open": {Mode: SandboxWorkspaceWrite, Network: true, AllowHosts: []string{"registry.test"}},
		"sandbox off":  {Mode: SandboxOff, AllowHosts: []string{"registry.test"}},
		"an IP":        {Mode: SandboxWorkspaceWrite, AllowHosts: []string{"10.0.0.1"}},
		"a URL":        {Mode: SandboxWorkspaceWrite, AllowHosts: []string{"https://registry.test/"}},
	} {
		_, err := New(t.TempDir(), WithSandbox(p))
		assert.Error(t, err, name)
		assert.Contains(t, err.Error(), "AllowHosts", name)
	}
}
