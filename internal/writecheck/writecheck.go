// Package writecheck carries on a call's context the permission check of
// the writes the call's tool decides on only while it runs: the files a
// language server's rename edits are known once the server answers, after
// the permission layer (package agent) has checked the call itself. The
// layer puts its check here; the tool asks it about every path before it
// writes any.
package writecheck

import "context"

// Func decides whether the call may write path (slash-separated, relative
// to the tool's root): nil allows it, an error refuses it.
type Func func(ctx context.Context, path string) error

type key struct{}

// With returns ctx carrying check, after the checks ctx carries already
// (each permission layer a call went through adds its own; every one must
// allow the write).
func With(ctx context.Context, check Func) context.Context {
	outer, _ := ctx.Value(key{}).(Func)
	if outer == nil {
		return context.WithValue(ctx, key{}, check)
	}
	return context.WithValue(ctx, key{}, Func(func(ctx context.Context, path string) error {
		if err := outer(ctx, path); err != nil {
			return err
		}
		return check(ctx, path)
	}))
}

// Check asks every check ctx carries about a write of path; with none, the
// write is allowed.
func Check(ctx context.Context, path string) error {
	if check, _ := ctx.Value(key{}).(Func); check != nil {
		return check(ctx, path)
	}
	return nil
}
