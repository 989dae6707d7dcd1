//go:build linux && !amd64

package sandbox

// legacyModeTries is empty: this architecture has only the *at calls.
func legacyModeTries() []modeTry { return nil }
