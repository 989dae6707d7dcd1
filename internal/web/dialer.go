package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Resolver looks host names up. *net.Resolver is one; tests give a fake
// that maps made-up names to their own servers.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer dials only what its [HostList] allows, deciding on effects: the
// host of the address asked for is canonicalized once ([CanonicalHost]),
// checked against the list on its port, resolved by the Dialer itself
// under that canonical name, and each address the name resolves to is
// judged by [BlockedReason] (and again by [DialControl] on the connection)
// before it is dialled. So the name checked is the name resolved, an IP
// address is never dialled as given, and a listed name that resolves to a
// private or loopback address is refused as http_get's guard refuses it.
// http_get and the sandbox's proxy ([Proxy]) dial through the same Dialer.
type Dialer struct {
	// Hosts is the allow-list; nil allows nothing.
	Hosts *HostList
	// Resolver resolves the canonical names; nil is net.DefaultResolver.
	Resolver Resolver
	// Private reports whether the canonical host may reach non-public
	// addresses (http_get's WithAllowPrivateNetworks and WithAllowedHosts);
	// nil: none may.
	Private func(host string) bool
	// Blocked is the sentinel a refused address's error wraps (http_get's
	// ErrBlockedAddress); nil is [ErrHostNotAllowed].
	Blocked error
	// Timeout bounds each connection attempt; 0 is 10 s.
	Timeout time.Duration
}

// DialContext dials addr ("host:port") over TCP when the list allows it:
// see [Dialer].
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("%w: network %q (TCP only)", ErrHostNotAllowed, network)
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: address %q: %w", ErrBadHost, addr, err)
	}
	port, err := parsePort(p)
	if err != nil {
		return nil, err
	}
	name, err := d.Hosts.Check(host, port)
	if err != nil {
		return nil, err
	}
	return d.dialName(ctx, network, name, port)
}

// dialName resolves the canonical, allowed name and dials the first of its
// addresses that is allowed and answers.
func (d *Dialer) dialName(ctx context.Context, network, name string, port int) (net.Conn, error) {
	var r Resolver = net.DefaultResolver
	if d.Resolver != nil {
		r = d.Resolver
	}
	ipNet := map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"}[network]
	ips, err := r.LookupNetIP(ctx, ipNet, name)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", name, err)
	}
	private := d.Private != nil && d.Private(name)
	blocked := d.Blocked
	if blocked == nil {
		blocked = ErrHostNotAllowed
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	dialer := &net.Dialer{Timeout: timeout}
	if !private {
		dialer.Control = DialControl(blocked)
	}
	var errs []error
	for _, ip := range ips {
		ip = ip.Unmap()
		if why := BlockedReason(ip); why != "" && !private {
			errs = append(errs, fmt.Errorf("%w: %s resolves to %s, %s; only public addresses are reached", blocked, name, ip, why))
			continue
		}
		conn, err := dialer.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("resolve %s: no address", name)
	}
	if len(errs) > 4 {
		errs = append(errs[:4], fmt.Errorf("and %d more", len(errs)-4))
	}
	return nil, joinErrors(errs)
}

// joinErrors joins errs on one line (errors.Join's newlines would break an
// HTTP status line or a log field).
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return oneLine{errors.Join(errs...)}
}

type oneLine struct{ error }

func (e oneLine) Error() string { return strings.ReplaceAll(e.error.Error(), "\n", "; ") }
func (e oneLine) Unwrap() error { return e.error }
