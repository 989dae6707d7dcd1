package web_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/web"
)

func TestBlockedReason(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ ip, want string }{
		// Plain addresses.
		{"127.0.0.1", "a loopback address"}, {"::1", "a loopback address"},
		{"10.1.2.3", "a private address"}, {"172.16.0.1", "a private address"}, {"192.168.1.1", "a private address"},
		{"169.254.169.254", "a link-local address"}, {"fe80::1", "a link-local address"}, {"fe80::1%eth0", "a link-local address"},
		{"0.0.0.0", "an unspecified address"}, {"::", "an unspecified address"}, {"0.1.2.3", "an unspecified address"},
		{"224.0.0.1", "a link-local address"}, {"239.1.1.1", "a multicast address"}, {"ff02::1", "a link-local address"}, {"ff0e::1", "a multicast address"},
		{"100.64.0.1", "a carrier-grade NAT address"}, {"fd00::1", "a private address"}, {"::ffff:127.0.0.1", "a loopback address"},
		{"255.255.255.255", "a broadcast address"},
		{"fec0::1", "a site-local address"}, {"feff:ffff::1", "a site-local address"}, {"fec0::1%eth0", "a site-local address"},
		{"198.18.0.1", "a benchmarking address"}, {"198.19.255.255", "a benchmarking address"},
		{"240.0.0.1", "a reserved address"}, {"254.255.255.255", "a reserved address"},
		{"192.0.0.1", "an IETF protocol address"}, {"192.0.0.255", "an IETF protocol address"},

		// IPv6 forms that embed an IPv4 address are judged by it.
		{"64:ff9b::127.0.0.1", "a NAT64 address embedding 127.0.0.1, a loopback address"},
		{"64:ff9b::10.0.0.1", "a NAT64 address embedding 10.0.0.1, a private address"},
		{"64:ff9b::169.254.169.254", "a NAT64 address embedding 169.254.169.254, a link-local address"},
		{"64:ff9b:1:7f00:0:100::", "a NAT64 address embedding 127.0.0.1, a loopback address"},             // /48: bits 48-63, 72-87
		{"64:ff9b:1:a:0:1::", "a NAT64 address embedding 10.0.0.1, a private address"},                    // /56: bits 56-63, 72-95
		{"64:ff9b:1:0:a9:fea9:fe00:0", "a NAT64 address embedding 169.254.169.254, a link-local address"}, // /64: bits 72-103
		{"64:ff9b:1::192.168.0.1", "a NAT64 address embedding 192.168.0.1, a private address"},            // /96
		{"2002:7f00:1::", "a 6to4 address embedding 127.0.0.1, a loopback address"},
		{"2002:a9fe:a9fe::1", "a 6to4 address embedding 169.254.169.254, a link-local address"},
		{"2002:c0a8:101:1::1", "a 6to4 address embedding 192.168.1.1, a private address"},
		{"::127.0.0.2", "an IPv4-compatible address embedding 127.0.0.2, a loopback address"},
		{"::10.0.0.1", "an IPv4-compatible address embedding 10.0.0.1, a private address"},
		{"::0.0.0.2", "an IPv4-compatible address embedding 0.0.0.2, an unspecified address"},
		{"::ffff:0:127.0.0.1", "an SIIT address embedding 127.0.0.1, a loopback address"},
		{"::ffff:0:192.168.1.1", "an SIIT address embedding 192.168.1.1, a private address"},
		{"::ffff:0:198.18.0.1", "an SIIT address embedding 198.18.0.1, a benchmarking address"},
		{"64:ff9b::198.18.0.1%eth0", "a NAT64 address embedding 198.18.0.1, a benchmarking address"},

		// Public addresses, plain or embedded.
		{"8.8.8.8", ""}, {"2606:4700::1111", ""}, {"100.128.0.1", ""}, {"198.20.0.1", ""}, {"192.0.1.1", ""}, {"239.255.255.255", "a multicast address"},
		{"64:ff9b::8.8.8.8", ""}, {"64:ff9b:1::8.8.8.8", ""}, {"64:ff9b:1:abcd:ef01:2345:808:808", ""}, {"2002:808:808::1", ""}, {"::8.8.8.8", ""}, {"::ffff:0:8.8.8.8", ""},
		{"fe00::1", ""}, {"2001:db8::1", ""},
	} {
		assert.Equal(t, tt.want, web.BlockedReason(netip.MustParseAddr(tt.ip)), tt.ip)
	}
}

// errBlocked stands for the sentinel codetools passes (ErrBlockedAddress).
var errBlocked = errors.New("address not allowed")

func TestDialControl(t *testing.T) {
	for _, tt := range []struct{ address, want string }{
		{"127.0.0.1:80", "127.0.0.1 is a loopback address"},
		{"[::ffff:10.0.0.1]:443", "10.0.0.1 is a private address"},
		{"[64:ff9b::a9fe:a9fe]:80", "64:ff9b::a9fe:a9fe is a NAT64 address embedding 169.254.169.254, a link-local address"},
		{"[2002:7f00:1::1]:80", "2002:7f00:1::1 is a 6to4 address embedding 127.0.0.1, a loopback address"},
		{"[fec0::1]:80", "fec0::1 is a site-local address"},
		{"198.18.5.5:80", "198.18.5.5 is a benchmarking address"},
		{"not an address", "not an address"},
		{"example.com:80", "example.com:80"},
	} {
		err := web.DialControl(errBlocked)("tcp", tt.address, nil)
		require.ErrorIs(t, err, errBlocked, tt.address)
		assert.Contains(t, err.Error(), tt.want)
	}
	for _, address := range []string{"8.8.8.8:443", "[2606:4700::1111]:443", "[64:ff9b::808:808]:80"} {
		assert.NoError(t, web.DialControl(errBlocked)("tcp", address, nil), address)
	}
}

// FuzzBlockedReasonEmbedded checks that every IPv6 form embedding an IPv4
// address is judged by that address: refused when it is refused, and, for
// the forms with a single place for it, let through when it is public.
func FuzzBlockedReasonEmbedded(f *testing.F) {
	for _, seed := range [][4]byte{{127, 0, 0, 1}, {10, 0, 0, 1}, {169, 254, 169, 254}, {8, 8, 8, 8}, {0, 0, 0, 0}, {255, 255, 255, 255}, {198, 18, 0, 1}, {192, 0, 0, 8}} {
		f.Add(seed[0], seed[1], seed[2], seed[3], uint16(0))
	}
	f.Fuzz(func(t *testing.T, a, b, c, d uint8, suffix uint16) {
		v4 := netip.AddrFrom4([4]byte{a, b, c, d})
		blocked := web.BlockedReason(v4) != ""
		mapped := netip.AddrFrom16(v4.As16())
		assert.Equal(t, web.BlockedReason(v4), web.BlockedReason(mapped), "IPv4-mapped %s", mapped)

		forms := map[string][16]byte{
			"NAT64":           {0, 0x64, 0xff, 0x9b, 12: a, b, c, d},
			"6to4":            {0x20, 0x02, a, b, c, d, 14: byte(suffix >> 8), 15: byte(suffix)},
			"IPv4-compatible": {12: a, b, c, d},
			"SIIT":            {8: 0xff, 0xff, 12: a, b, c, d},
		}
		for form, raw := range forms {
			ip := netip.AddrFrom16(raw)
			why := web.BlockedReason(ip)
			if blocked {
				assert.NotEmpty(t, why, "%s %s of %s", form, ip, v4)
			} else if form != "IPv4-compatible" || a != 0 { // ::/8 holds :: and ::1
				assert.Empty(t, why, "%s %s of public %s", form, ip, v4)
			}
		}
		// The local-use NAT64 prefix: the address may sit at any of the
		// places RFC 6052 allows, around the "u" octet (bits 64-71, zero).
		for _, raw := range [][16]byte{
			{0, 0x64, 0xff, 0x9b, 0, 1, a, b, 9: c, d},    // /48
			{0, 0x64, 0xff, 0x9b, 0, 1, 7: a, 9: b, c, d}, // /56
			{0, 0x64, 0xff, 0x9b, 0, 1, 9: a, b, c, d},    // /64
			{0, 0x64, 0xff, 0x9b, 0, 1, 12: a, b, c, d},   // /96
		} {
			ip := netip.AddrFrom16(raw)
			if blocked {
				assert.NotEmpty(t, web.BlockedReason(ip), "local NAT64 %s of %s", ip, v4)
			}
		}
	})
}
