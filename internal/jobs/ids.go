package jobs

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
)

// Job ids are drawn from one counter per process, shared by every table,
// so that no two jobs of a process have the same id (two CodeTools, a
// shell and a terminal), and the counter starts at a random point of
// [idFloor, idFloor+idSpan), so that an id a model kept from another
// process (a durable run resumed after a crash, a replica) falls outside
// this process's range and is answered as lost rather than naming one of
// its jobs. Ids stay short: 4 to 7 digits.
const (
	idFloor = 1_000
	idSpan  = 8_000_000
)

var ids struct {
	once       sync.Once
	mu         sync.Mutex
	first, end int // the ids given are [first, end)
}

// seedIDs draws the first id of the process.
func seedIDs() {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand's promise since Go 1.24)
	ids.first = idFloor + int(binary.LittleEndian.Uint64(b[:])%idSpan)
	ids.end = ids.first
}

// newID returns an id no job of this process had.
func newID() int {
	ids.once.Do(seedIDs)
	ids.mu.Lock()
	defer ids.mu.Unlock()
	id := ids.end
	ids.end++
	return id
}

// nextID is the id the next job of the process gets.
func nextID() int {
	ids.once.Do(seedIDs)
	ids.mu.Lock()
	defer ids.mu.Unlock()
	return ids.end
}

// givenHere reports whether id is one this process gave.
func givenHere(id int) bool {
	ids.once.Do(seedIDs)
	ids.mu.Lock()
	defer ids.mu.Unlock()
	return id >= ids.first && id < ids.end
}
