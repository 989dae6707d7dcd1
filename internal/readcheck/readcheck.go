// Package readcheck carries on a call's context the permission check of a
// read, as a permission layer (package agent's guard) would decide
// read_file's call on a path, so that what serves every call without being
// one (codetools' language servers, which read the tree themselves) can be
// kept from exactly the files the layer refuses, whatever the rule's
// spelling: globs, regular expressions, hooks, callbacks.
package readcheck

import "context"

// Func decides whether the tools may read path (slash-separated, relative
// to the tool's root; a folder's path for the folder and all it holds):
// nil allows it, an error refuses it. It may be asked about every path of
// the tree, long after the call that carried it.
type Func func(ctx context.Context, path string) error

// Check is one permission layer's read check. Key identifies the layer
// (comparable, the same for every call it checks), so that whoever keeps
// checks keeps one per layer.
type Check struct {
	Key   any
	Check Func
}

type key struct{}

// With returns ctx carrying check after those ctx carries already (each
// permission layer a call went through adds its own; a read is refused
// when one of them refuses it).
func With(ctx context.Context, check Check) context.Context {
	outer, _ := ctx.Value(key{}).([]Check)
	for _, c := range outer {
		if c.Key == check.Key {
			return ctx
		}
	}
	all := append(outer[:len(outer):len(outer)], check)
	return context.WithValue(ctx, key{}, all)
}

// From returns the checks ctx carries, outermost first; nil with none.
// The slice must not be modified.
func From(ctx context.Context) []Check {
	all, _ := ctx.Value(key{}).([]Check)
	return all
}
