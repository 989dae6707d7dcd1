package llmtoolkit

import "errors"

// SessionChecker is implemented by a tool observer that reads values from
// the session map, as trace's Recorder reads the tenant and conversation
// IDs. [PrepareSession] asks each declared tool's checkers once, and
// [Session.Err] reports what they found, so that a malformed session is an
// error to the host when the turn is prepared rather than a refusal of
// every call at run time.
type SessionChecker interface {
	// CheckSession returns an error naming the bad values, or nil.
	CheckSession(values map[string]any) error
}

// Err returns what the session's checkers ([SessionChecker]) found wrong
// with the session map when [PrepareSession] built s, joined, or nil. The
// calls such a session lets through may still be refused by the checkers
// themselves at run time; Err tells the host once, with the fix.
func (s *Session) Err() error { return s.err }

// checkSession asks the observers of t that are [SessionChecker]s about
// values, adding each distinct error to errs.
func checkSession(t Tool, values map[string]any, errs []error) []error {
	for _, ob := range t.Observers {
		c, ok := ob.(SessionChecker)
		if !ok {
			continue
		}
		err := safeCheckSession(c, values)
		if err == nil {
			continue
		}
		dup := false
		for _, e := range errs {
			if e.Error() == err.Error() {
				dup = true
				break
			}
		}
		if !dup {
			errs = append(errs, err)
		}
	}
	return errs
}

// safeCheckSession runs a checker, turning its panic into an error.
func safeCheckSession(c SessionChecker, values map[string]any) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v}
		}
	}()
	return c.CheckSession(values)
}

// joinErrors is errors.Join that keeps a single error as it is.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
