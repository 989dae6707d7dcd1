// Package textutil holds the text helpers the tools share: output
// truncation by lines and bytes that never cuts a line in half, human-readable
// sizes, and binary sniffing (the MIME type is codetools' sniffMIME: this
// package does not link net/http, which internal/search would carry into
// every program that greps, with its package initialisation).
package textutil
