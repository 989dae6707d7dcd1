// Package crashtest holds a test of the temporal module that needs the
// checkpoint package's SQL store (gorm, SQLite): a worker SIGKILLed inside
// a tool call that wrote a file, the run resumed, one checkpoint per turn.
// It is a module of its own so that those requirements stay out of the
// temporal module's (a module requires only what its non-test code
// imports); it has no API and is never released.
package crashtest
