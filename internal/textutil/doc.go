// Package textutil holds the text helpers the tools share: output
// truncation by lines and bytes that never cuts a line in half, human-readable
// sizes, and binary sniffing.
package textutil
