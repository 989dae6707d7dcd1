package web

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// ErrHostNotAllowed is wrapped by the error for a host, or a host and
// port, that a [HostList] does not name.
var ErrHostNotAllowed = errors.New("host not in the network allow-list")

// ErrBadHost is wrapped by the error for a host that is not a DNS name:
// an IP address in any spelling, or a name with characters DNS does not
// take.
var ErrBadHost = errors.New("not a host name")

// HostList is a network allow-list of host names. An entry is a name
// ("registry.npmjs.org"), allowing its ports 80 and 443, or a name and a
// port ("registry.internal:8443"), allowing that port; "*.example.com"
// stands for every name below example.com (not example.com itself). Every
// name is held in its canonical form ([CanonicalHost]), and every host
// checked is canonicalized the same way first, so the list decides on the
// name that is then resolved and dialled. IP addresses are never listed.
type HostList struct {
	entries []hostEntry
}

type hostEntry struct {
	name string // canonical; for a wildcard, the suffix without "*."
	sub  bool   // "*.name": the names below name
	port int    // 0: ports 80 and 443
}

// String is the entry as written back (canonical).
func (e hostEntry) String() string {
	s := e.name
	if e.sub {
		s = "*." + s
	}
	if e.port != 0 {
		s += ":" + strconv.Itoa(e.port)
	}
	return s
}

// ParseHostList reads the entries of an allow-list; an entry that is not
// a host name (an IP address, a URL, a name DNS does not take) fails with
// an error naming it. No entry gives an empty list, which allows nothing.
func ParseHostList(entries []string) (*HostList, error) {
	l := &HostList{}
	for _, raw := range entries {
		e, err := parseEntry(strings.TrimSpace(raw))
		if err != nil {
			return nil, fmt.Errorf("allow-list entry %q: %w", raw, err)
		}
		if !slices.Contains(l.entries, e) {
			l.entries = append(l.entries, e)
		}
	}
	return l, nil
}

func parseEntry(s string) (hostEntry, error) {
	var e hostEntry
	if strings.Contains(s, "/") {
		return e, fmt.Errorf("%w: give a host name (\"example.com\", \"*.example.com\" or \"example.com:8443\"), not a URL", ErrBadHost)
	}
	host := s
	if h, p, err := net.SplitHostPort(s); err == nil {
		port, err := parsePort(p)
		if err != nil {
			return e, err
		}
		host, e.port = h, port
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host, e.sub = rest, true
	}
	name, err := CanonicalHost(host)
	if err != nil {
		return e, err
	}
	e.name = name
	return e, nil
}

func parsePort(p string) (int, error) {
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 || p != strconv.Itoa(port) {
		return 0, fmt.Errorf("%w: port %q: give a number from 1 to 65535", ErrBadHost, p)
	}
	return port, nil
}

// Entries returns the list's entries in canonical form.
func (l *HostList) Entries() []string {
	out := make([]string, len(l.entries))
	for i, e := range l.entries {
		out[i] = e.String()
	}
	return out
}

// Len is the number of entries.
func (l *HostList) Len() int {
	if l == nil {
		return 0
	}
	return len(l.entries)
}

// Check canonicalizes host and returns its canonical form when the list
// allows it on port; otherwise an error wrapping [ErrHostNotAllowed] (and
// [ErrBadHost] for an IP address or a name DNS does not take) that names
// the host, the port and the entries.
func (l *HostList) Check(host string, port int) (string, error) {
	name, err := CanonicalHost(host)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %w; the allow-list names hosts only", ErrHostNotAllowed, host, err)
	}
	if l.allows(name, port) {
		return name, nil
	}
	listed := "none"
	if l.Len() > 0 {
		listed = strings.Join(l.Entries(), ", ")
	}
	return "", fmt.Errorf("%w: %s port %d (allowed: %s)", ErrHostNotAllowed, name, port, listed)
}

// allows reports whether the canonical name may be reached on port.
func (l *HostList) allows(name string, port int) bool {
	if l == nil {
		return false
	}
	for _, e := range l.entries {
		if (e.port == 0 && port != 80 && port != 443) || (e.port != 0 && e.port != port) {
			continue
		}
		if (e.sub && strings.HasSuffix(name, "."+e.name)) || (!e.sub && name == e.name) {
			return true
		}
	}
	return false
}

// maxHostLen is the longest DNS name (RFC 1035), without its final dot.
const maxHostLen = 253

// CanonicalHost returns the one form of host that an allow-list decides on
// and a dial resolves: ASCII (IDNA's lookup mapping: lower case, full-width
// letters folded, Unicode labels as "xn--"), without a final dot, every
// label 1 to 63 letters, digits or inner hyphens. It refuses, wrapping
// [ErrBadHost], every IP address whatever its spelling: a dotted quad, an
// IPv6 literal, and any name whose last label is a number (decimal, octal
// or "0x" hexadecimal: "127.1", "2130706433", "0x7f.1"), which URL parsers
// and C resolvers read as an IPv4 address.
func CanonicalHost(host string) (string, error) {
	if host == "" {
		return "", fmt.Errorf("%w: empty", ErrBadHost)
	}
	if len(host) > 4*maxHostLen { // before any mapping work
		return "", fmt.Errorf("%w: longer than %d characters", ErrBadHost, maxHostLen)
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil || strings.ContainsAny(host, ":[]%") {
		return "", fmt.Errorf("%w: an IP address", ErrBadHost)
	}
	name, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrBadHost, strings.TrimPrefix(err.Error(), "idna: "))
	}
	name = strings.TrimSuffix(name, ".")
	if name == "" || len(name) > maxHostLen {
		return "", fmt.Errorf("%w: %d characters, 1 to %d needed", ErrBadHost, len(name), maxHostLen)
	}
	labels := strings.Split(name, ".")
	for _, lb := range labels {
		if !ldhLabel(lb) {
			return "", fmt.Errorf("%w: label %q: letters, digits and inner hyphens only, 1 to 63 of them", ErrBadHost, lb)
		}
	}
	if numeric(labels[len(labels)-1]) {
		return "", fmt.Errorf("%w: an IP address (the last label is a number)", ErrBadHost)
	}
	return name, nil
}

// ldhLabel reports whether lb is a DNS label of letters (lower case, as
// IDNA maps them), digits and hyphens, neither first nor last.
func ldhLabel(lb string) bool {
	if lb == "" || len(lb) > 63 || lb[0] == '-' || lb[len(lb)-1] == '-' {
		return false
	}
	for i := 0; i < len(lb); i++ {
		c := lb[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// numeric reports whether a last label makes the name an IPv4 address to
// the WHATWG URL parser and to inet_aton: all digits, or "0x" and hex
// digits (or nothing).
func numeric(lb string) bool {
	if rest, ok := strings.CutPrefix(lb, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(lb, "0123456789") == ""
}
