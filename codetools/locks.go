package codetools

import "sync"

// pathLocks serialises the write tools on one file: a mutex per path,
// created on demand and dropped when nobody holds or waits for it. The
// zero value is ready to use.
type pathLocks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	sync.Mutex
	refs int
}

// lock locks key and returns the function that unlocks it.
func (l *pathLocks) lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*pathLock{}
	}
	pl := l.m[key]
	if pl == nil {
		pl = &pathLock{}
		l.m[key] = pl
	}
	pl.refs++
	l.mu.Unlock()
	pl.Lock()
	return func() {
		pl.Unlock()
		l.mu.Lock()
		pl.refs--
		if pl.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
}
