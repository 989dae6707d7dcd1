package web

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// Special ranges that netip's predicates do not cover.
var (
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")   // RFC 6598
	ietfProto  = netip.MustParsePrefix("192.0.0.0/24")    // RFC 6890: IETF protocol assignments
	benchmark  = netip.MustParsePrefix("198.18.0.0/15")   // RFC 2544: benchmarking
	reserved4  = netip.MustParsePrefix("240.0.0.0/4")     // RFC 1112: reserved, "class E"
	siteLocal6 = netip.MustParsePrefix("fec0::/10")       // RFC 3879: deprecated site-local
	nat64      = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052: well-known NAT64 prefix
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")  // RFC 8215: local-use NAT64 prefix
	sixToFour  = netip.MustParsePrefix("2002::/16")       // RFC 3056: 6to4
	compat6    = netip.MustParsePrefix("::/96")           // RFC 4291: IPv4-compatible (deprecated)
	siit6      = netip.MustParsePrefix("::ffff:0:0:0/96") // RFC 2765: SIIT IPv4-translated
)

// BlockedReason says why ip may not be dialled ("a loopback address", …),
// or "" when it is public. An IPv6 address that embeds an IPv4 address is
// judged by the IPv4 address.
func BlockedReason(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("") // netip.Prefix.Contains is false for zoned addresses
	if why := blockedKind(ip); why != "" {
		return withArticle(why) + " address"
	}
	for _, e := range embeddedIPv4(ip) {
		if why := blockedKind(e.addr); why != "" {
			return fmt.Sprintf("%s address embedding %s, %s address", withArticle(e.form), e.addr, withArticle(why))
		}
	}
	return ""
}

// withArticle puts "a" or "an" before an address kind.
func withArticle(kind string) string {
	if strings.ContainsRune("aeiouAEIOU", rune(kind[0])) || strings.HasPrefix(kind, "SIIT") {
		return "an " + kind
	}
	return "a " + kind
}

// blockedKind names the kind of non-public address ip is, or "".
func blockedKind(ip netip.Addr) string {
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
	case siteLocal6.Contains(ip):
		return "site-local"
	case cgnat.Contains(ip):
		return "carrier-grade NAT"
	case ip.Is4() && ip.As4()[0] == 0: // "this network"
		return "unspecified"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	case reserved4.Contains(ip):
		return "reserved"
	case benchmark.Contains(ip):
		return "benchmarking"
	case ietfProto.Contains(ip):
		return "IETF protocol"
	}
	return ""
}

// embedded is an IPv4 address found inside an IPv6 address.
type embedded struct {
	form string // "NAT64", "6to4", …
	addr netip.Addr
}

// embeddedIPv4 returns the IPv4 addresses ip (without zone) may carry.
//
// Under the local-use NAT64 prefix the network chooses the prefix length,
// which sets where the IPv4 address sits (RFC 6052, section 2.2): in the
// last 32 bits for a /96, or around the "u" octet (bits 64 to 71, always
// zero) for a /48, /56 or /64, whose trailing suffix is zero. Every place
// the address can be in is returned.
func embeddedIPv4(ip netip.Addr) []embedded {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	v4 := func(i, j, k, l int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[j], b[k], b[l]}) }
	zeroFrom := func(i int) bool {
		for ; i < len(b); i++ {
			if b[i] != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case nat64.Contains(ip):
		return []embedded{{"NAT64", v4(12, 13, 14, 15)}}
	case nat64Local.Contains(ip):
		var out []embedded
		if b[8] == 0 {
			if zeroFrom(11) {
				out = append(out, embedded{"NAT64", v4(6, 7, 9, 10)}) // /48
			}
			if zeroFrom(12) {
				out = append(out, embedded{"NAT64", v4(7, 9, 10, 11)}) // /56
			}
			if zeroFrom(13) {
				out = append(out, embedded{"NAT64", v4(9, 10, 11, 12)}) // /64
			}
		}
		return append(out, embedded{"NAT64", v4(12, 13, 14, 15)}) // /96
	case sixToFour.Contains(ip):
		return []embedded{{"6to4", v4(2, 3, 4, 5)}}
	case compat6.Contains(ip):
		return []embedded{{"IPv4-compatible", v4(12, 13, 14, 15)}}
	case siit6.Contains(ip):
		return []embedded{{"SIIT", v4(12, 13, 14, 15)}}
	}
	return nil
}

// DialControl returns a net.Dialer Control function that refuses every
// address BlockedReason names, with an error wrapping blocked. It runs on
// the address actually dialled, after DNS, for every connection including
// redirects, so neither a DNS answer nor a redirect can slip past it.
func DialControl(blocked error) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", blocked, address)
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("%w: %s", blocked, address)
		}
		if why := BlockedReason(ip); why != "" {
			return fmt.Errorf("%w: %s is %s; http_get only reaches public addresses", blocked, ip.Unmap(), why)
		}
		return nil
	}
}
