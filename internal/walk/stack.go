package walk

// DefaultMaxHandles is the [Stack.Limit] of a Stack that sets none.
const DefaultMaxHandles = 256

// Stack holds the folders from the top of a depth-first walk (level 0)
// down to the folder being walked, with an open handle for those that
// still need one: a folder needs its handle until its last subfolder is
// opened ([Stack.Drop]), so a chain of folders holds two at most. A deep
// tree whose folders all still have subfolders to visit would hold one per
// level: past Limit the shallowest handles are closed, and reopened when
// the walk comes back to them, one confined step per level from the
// nearest handle still open (the top is always open); the reopen keeps the
// deepest handles it opens on the way, so coming back up costs about
// depth/Limit reopens. The zero Stack is empty, with DefaultMaxHandles.
type Stack struct {
	// Limit bounds the handles held at once, so that a deep tree cannot
	// take the process's descriptors (at least 3: the top, a folder and
	// the one opened below it; 0 means DefaultMaxHandles).
	Limit int

	names []string // names[i]: the name of level i in level i-1 (names[0] unused)
	dirs  []*Dir   // dirs[i]: level i's handle, nil when closed
	held  int      // handles open in dirs
	low   int      // no handle is open at levels 1 to low-1
}

// Push adds a level below the last one, with its open handle; the Stack
// closes it.
func (s *Stack) Push(name string, d *Dir) {
	s.names = append(s.names, name)
	s.dirs = append(s.dirs, d)
	s.held++
	s.evict()
}

// Pop closes the last level's handle, if open, and removes the level.
func (s *Stack) Pop() {
	last := len(s.dirs) - 1
	s.Drop(last)
	s.names, s.dirs = s.names[:last], s.dirs[:last]
	s.low = min(s.low, last)
}

// Drop closes the handle of a level that will not need it any more.
func (s *Stack) Drop(level int) {
	if d := s.dirs[level]; d != nil {
		d.Close()
		s.dirs[level] = nil
		s.held--
	}
}

// CloseAll closes every open handle and empties the stack.
func (s *Stack) CloseAll() {
	for len(s.dirs) > 0 {
		s.Pop()
	}
}

// Held is the number of handles open.
func (s *Stack) Held() int { return s.held }

// Get returns the handle of level, reopening it (and the levels above it
// back to the nearest open one) if it was closed to stay under Limit.
func (s *Stack) Get(level int) (*Dir, error) {
	if d := s.dirs[level]; d != nil {
		return d, nil
	}
	from := level - 1
	for s.dirs[from] == nil { // level 0 is never closed by evict
		from--
	}
	for i := from + 1; i <= level; i++ {
		d, err := s.dirs[i-1].OpenSub(s.names[i])
		if err != nil {
			return nil, err
		}
		s.dirs[i] = d
		s.held++
		s.low = min(s.low, i)
		s.evict()
	}
	return s.dirs[level], nil
}

// evict closes the shallowest handles below level 0 while more than Limit
// are open.
func (s *Stack) evict() {
	limit := s.Limit
	if limit == 0 {
		limit = DefaultMaxHandles
	}
	limit = max(limit, 3) // the top, a folder and the one opened below it
	if s.low == 0 {
		s.low = 1
	}
	for s.held > limit && s.low < len(s.dirs) {
		s.Drop(s.low)
		s.low++
	}
}
