package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const r = "[REDACTED]"

func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		fields  []string
		in      string
		want    string
		secrets []string
	}{
		{"plain name at any depth, any case", []string{"Password"},
			`{"password":"a1","x":{"PASSWORD":"b2","list":[{"passWord":"c3"}]}}`,
			`{"password":"[REDACTED]","x":{"PASSWORD":"[REDACTED]","list":[{"passWord":"[REDACTED]"}]}}`,
			[]string{"a1", "b2", "c3"}},
		{"dotted path only there", []string{"auth.token"},
			`{"token":"keep","auth":{"token":"t0k","other":{"token":"keep2"}}}`,
			`{"token":"keep","auth":{"token":"[REDACTED]","other":{"token":"keep2"}}}`,
			[]string{"t0k"}},
		{"dotted path in any case", []string{"Auth.TOKEN"},
			`{"AUTH":{"Token":"t0k"},"token":"keep"}`,
			`{"AUTH":{"Token":"[REDACTED]"},"token":"keep"}`,
			[]string{"t0k"}},
		{"dotted path through arrays", []string{"users.pin"},
			`{"users":[{"pin":1234,"name":"ada"},{"pin":5678}],"pin":1}`,
			`{"users":[{"pin":"[REDACTED]","name":"ada"},{"pin":"[REDACTED]"}],"pin":1}`,
			[]string{"1234", "5678"}},
		{"whole subtree", []string{"creds"},
			`{"creds":{"user":"bob","keys":["k1",42.5]}}`,
			`{"creds":"[REDACTED]"}`,
			[]string{"bob", "k1", "42.5"}},
		{"nothing sensitive", nil, `{"a":"b"}`, `{"a":"b"}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := decode(t, tc.in)
			secrets := NewFields(tc.fields).Apply(v, r)
			assert.Equal(t, decode(t, tc.want), v)
			assert.ElementsMatch(t, tc.secrets, secrets)
		})
	}
}

func TestScrub(t *testing.T) {
	tests := []struct {
		name, in string
		secrets  []string
		want     string
	}{
		{"echoed value", "/pin: must be <= 65535 but found 918273", []string{"918273"}, "/pin: must be <= 65535 but found [REDACTED]"},
		{"longest first", "hunter22 and hunter2", []string{"hunter2", "hunter22"}, "[REDACTED] and [REDACTED]"},
		{"short values left", "a b", []string{"a"}, "a b"},
		{"URL password", `parse "https://ada:s3cret@example.com/x": bad`, nil, `parse "https://ada:[REDACTED]@example.com/x": bad`},
		{"URL without password", "https://ada@example.com and ftp://h/x", nil, "https://ada@example.com and ftp://h/x"},
		{"bad-scheme URL", "unsupported scheme in gopher://u:pw@h", nil, "unsupported scheme in gopher://u:[REDACTED]@h"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Scrub(tc.in, tc.secrets, r))
		})
	}
}

func TestScrubJSON(t *testing.T) {
	v := decode(t, `{"error":"found 918273","list":["x918273x",{"918273":"k"}]}`)
	ScrubJSON(v, []string{"918273"}, r)
	assert.NotContains(t, mustJSON(t, v), "918273")
}

func mustJSON(t testing.TB, v any) string {
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}

// FuzzScrubLeavesNoSecret: whatever the text and the secret, the secret
// (when long enough to be searched) is gone from the scrubbed text unless
// the replacement itself brings it back.
func FuzzScrubLeavesNoSecret(f *testing.F) {
	f.Add("found 918273 here", "918273")
	f.Add("https://u:pw@h/", "pw")
	f.Add("aaaa", "aa")
	f.Fuzz(func(t *testing.T, text, secret string) {
		out := Scrub(text, []string{secret}, r)
		if len(secret) >= MinSecretLen && !overlaps(secret, r) {
			assert.NotContains(t, out, secret)
		}
	})
}

// overlaps reports whether the replacement could rebuild the secret with
// its neighbours: it contains it, or an end of it is an end of the secret.
func overlaps(secret, repl string) bool {
	if strings.Contains(repl, secret) {
		return true
	}
	for i := 1; i < len(repl); i++ {
		if strings.HasPrefix(secret, repl[i:]) || strings.HasSuffix(secret, repl[:i]) {
			return true
		}
	}
	return false
}

func TestURLPasswordWithAt(t *testing.T) {
	assert.Equal(t, "dial https://ada:[REDACTED]@example.com/x", URLPasswords("dial https://ada:p@ss@example.com/x", r))
	assert.Equal(t, `"ftp://u:[REDACTED]@h" and http://v:[REDACTED]@k`, URLPasswords(`"ftp://u:x@h" and http://v:w@k`, r))
}

// TestURLPasswordsLenientForms: the forms a WHATWG parser (a browser, many
// HTTP clients) reads as a URL with a password, though Go's net/url does
// not: a special scheme followed by any number of slashes or backslashes,
// in any case. Text that is not such a URL is left alone.
func TestURLPasswordsLenientForms(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http:user:s3cr3t@host", "http:user:[REDACTED]@host"},
		{`http:\\user:s3cr3t@host`, `http:\\user:[REDACTED]@host`},
		{"http:/user:s3cr3t@host", "http:/user:[REDACTED]@host"},
		{"HTTP:///user:s3cr3t@host/x", "HTTP:///user:[REDACTED]@host/x"},
		{"wss:u:s3cr3t@h and Ftp:\\/u:s3cr3t@h", "wss:u:[REDACTED]@h and Ftp:\\/u:[REDACTED]@h"},
		{`url "http:u:s3cr3t@h" has no host`, `url "http:u:[REDACTED]@h" has no host`},
		{"postgres://u:s3cr3t@db/x", "postgres://u:[REDACTED]@db/x"},
		// Not URLs with a password.
		{"user:s3cr3t@host/x", "user:s3cr3t@host/x"},
		{"mailto:ada@example.com", "mailto:ada@example.com"},
		{"the http: header, user:ada@x", "the http: header, user:ada@x"},
		{"xhttp:u:p@h", "xhttp:u:p@h"},
		{"time 10:30@home", "time 10:30@home"},
	} {
		assert.Equal(t, tt.want, URLPasswords(tt.in, r), tt.in)
	}
}

func TestRaw(t *testing.T) {
	tests := []struct {
		name   string
		fields []string
		raw    string
		want   []string
	}{
		{"cut off in the value", []string{"password"}, `{"password": "hunter2-XYZ`, []string{"hunter2-XYZ"}},
		{"closed value, other keys kept", []string{"Password"}, `{"user":"bob","PASSWORD" : "s3cret"`, []string{"s3cret"}},
		{"escaped quote: as written, decoded, Go-quoted", []string{"token"}, `{"token":"a\"bc"`, []string{`a\"bc`, `a"bc`, `a\\\"bc`, `a\"bc`}},
		{"bare names and values", []string{"pin"}, `pin=12345, other: 1`, []string{"12345"}},
		{"single quotes", []string{"key"}, `{'key': 'k-9876'}`, []string{"k-9876"}},
		{"dotted name by its last part", []string{"auth.token"}, `{"auth":{"token":"tok-1"`, []string{"tok-1"}},
		{"part of a longer name is not it", []string{"pass"}, `{"password":"nope", "passes": 3`, nil},
		{"number value", []string{"pin"}, `{"pin": 98765}`, []string{"98765"}},
		{"nothing sensitive", nil, `{"password":"x"`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, NewFields(tc.fields).Raw(tc.raw))
		})
	}
}

func FuzzRaw(f *testing.F) {
	f.Add(`{"password": "hunter2-XYZ`)
	f.Add(`password='a\'b`)
	f.Fuzz(func(t *testing.T, raw string) {
		for _, s := range NewFields([]string{"password", "a.b"}).Raw(raw) {
			assert.NotEmpty(t, s)
		}
	})
}

// TestURLPassword: a whole URL as written hides all that may be its
// password, even where URLPasswords, made for free text, would stop
// (issue 26: http_get had its own copy of this scrubber).
func TestURLPassword(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://user:s3cr3t@host/", "http://user:xxxxx@host/"},
		{"http://user:s3cr3t@host:bad/", "http://user:xxxxx@host:bad/"},
		{"http://user:s3:cr@t@host/p", "http://user:xxxxx@host/p"},
		{"http://user:pa//ss@host", "http://user:xxxxx@host"},
		{"http://user:pa?ss@host", "http://user:xxxxx@host"},
		{"http://user:pa#ss@host", "http://user:xxxxx@host"},
		{"user:s3cr3t@host/x", "user:xxxxx@host/x"},
		{"http:user:s3cr3t@host", "http:xxxxx@host"},
		{`http:\\user:s3cr3t@host`, "http:xxxxx@host"},
		{"http://user@host/", "http://user@host/"},
		{"http://host/a:b", "http://host/a:b"},
		{"::not a url", "::not a url"},
		{"", ""},
	} {
		assert.Equal(t, tt.want, URLPassword(tt.in, "xxxxx"), tt.in)
	}
}

// FuzzURLPassword: whatever the user, password and rest, a URL written
// with them keeps all but its password, which is replaced whole. (A
// password after "user:" that starts with "//" reads as a scheme's "://":
// what follows is then a user name, left alone.)
func FuzzURLPassword(f *testing.F) {
	f.Add("http", "user", "s3cr3t", "host/p?q")
	f.Add("", "u", "pa/ss?#:@", "h")
	f.Fuzz(func(t *testing.T, scheme, user, password, rest string) {
		if strings.ContainsAny(scheme+user, ":@") || strings.Contains(rest, "@") ||
			(scheme == "" && strings.HasPrefix(password, "//")) {
			return
		}
		prefix := user + ":"
		if scheme != "" {
			prefix = scheme + "://" + prefix
		}
		got := URLPassword(prefix+password+"@"+rest, "xxxxx")
		assert.Equal(t, prefix+"xxxxx@"+rest, got)
	})
}

func TestFieldsSecrets(t *testing.T) {
	f := NewFields([]string{"password", "auth.token"})
	args := map[string]any{"password": "hunter2", "auth": map[string]any{"token": "tok-123", "user": "ada"}, "n": 1}
	assert.ElementsMatch(t, []string{"hunter2", "tok-123"}, f.Secrets(args, ""))
	assert.Equal(t, "hunter2", args["password"], "the arguments are unchanged")
	assert.Equal(t, []string{"hunter2"}, f.Secrets(nil, `{"password": "hunter2`))
	assert.Nil(t, NewFields().Secrets(args, ""))
}
