// Package web is the engine of codetools' http_get: the network guard that
// keeps it off non-public addresses, and the conversion of a page to
// Markdown or plain text in bounded work and memory. The tool (its
// schema, client, redirects, errors, password scrubbing and Display)
// stays in codetools.
//
// # Network guard
//
// [DialControl] is a net.Dialer Control hook: it judges the address
// actually dialled, after DNS, for every connection including redirects,
// so neither a DNS answer nor a redirect slips past it. [BlockedReason]
// refuses loopback, private, link-local, multicast, unspecified,
// broadcast, carrier-grade NAT, benchmarking (198.18.0.0/15), reserved
// (240.0.0.0/4), IETF protocol (192.0.0.0/24) and site-local (fec0::/10)
// addresses, and judges an IPv6 address that embeds an IPv4 address by
// that address: NAT64 (64:ff9b::/96, and 64:ff9b:1::/48 at every place the
// network's prefix length may put it), 6to4, IPv4-compatible and SIIT.
//
// # HTML to Markdown
//
// A page's Markdown can be far larger than its HTML and far costlier to
// make (an empty link becomes the page's full URL; a line deep in nested
// lists is indented again at every level), and the converter
// (html-to-markdown) neither streams nor stops on its own. So [Markdown]
// cuts the page to a number of nodes, flattens elements nested deeper
// than 64, and converts under a plugin that renders each element into a
// buffer of its own and aborts when one element's Markdown or all the
// Markdown rendered outgrow a budget in proportion to maxBytes, or when
// the context ends. A page too large is converted from a shorter prefix
// (up to three attempts, the answer says so); a page too intricate, or
// one the parser refuses, is shown as plain text ([Text]) with a note.
// The conversion runs on a goroutine of its own under internal/guard, so
// the call returns as soon as its context ends; a panic in the converter
// is logged with its stack and the page's text is shown instead.
//
// Measured on hostile pages at 10 MiB (the most http_get allows): at most
// about 4 s of CPU and 350 MiB at peak; at the default 1 MiB, a tenth of
// that. Ordinary pages convert about 15% slower than without the guard, to
// the same bytes.
package web
