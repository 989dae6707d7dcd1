package codetools

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// ErrBlockedAddress is wrapped by http_get's error for a connection its
// network guard refused: a loopback, private, link-local or otherwise
// non-public address. See [WithAllowPrivateNetworks] and [WithAllowedHosts].
var ErrBlockedAddress = errors.New("address not allowed")

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// blockedReason says why ip may not be dialled, or "" when it is public.
func blockedReason(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case ip.IsPrivate(): // 10/8, 172.16/12, 192.168/16, fc00::/7
		return "private"
	case ip.Is4() && cgnat.Contains(ip):
		return "carrier-grade NAT"
	case ip.Is4() && ip.As4()[0] == 0: // "this network"
		return "unspecified"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	}
	return ""
}

// guardControl is a net.Dialer Control function: it runs on the address
// actually dialled, after DNS, for every connection including redirects,
// so neither a DNS answer nor a redirect can slip past it.
func guardControl(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrBlockedAddress, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrBlockedAddress, address)
	}
	if why := blockedReason(ip); why != "" {
		return fmt.Errorf("%w: %s is a %s address; http_get only reaches public addresses", ErrBlockedAddress, ip.Unmap(), why)
	}
	return nil
}
