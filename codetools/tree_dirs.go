package codetools

// treeMaxHandles bounds the folder handles a tree walk holds at once, so
// that a deep tree cannot take the process's descriptors. A variable for
// the tests.
var treeMaxHandles = 256

// treeDirs holds the folders from the top of a tree walk (level 0) down to
// the folder being walked, with an open handle for those that still need
// one: a folder needs its handle until its last subfolder is opened, so a
// chain of folders holds two at most. A deep tree whose folders all still
// have subfolders to visit would hold one per level: past treeMaxHandles
// the shallowest handles are closed, and reopened when the walk comes back
// to them, one confined step per level from the nearest handle still open
// (the top is always open); the reopen keeps the deepest handles it opens
// on the way, so coming back up costs about depth/treeMaxHandles reopens.
type treeDirs struct {
	names []string   // names[i]: the name of level i in level i-1 (names[0] unused)
	dirs  []*walkDir // dirs[i]: level i's handle, nil when closed
	held  int        // handles open in dirs
	low   int        // no handle is open at levels 1 to low-1
}

// push adds a level below the last one, with its open handle.
func (s *treeDirs) push(name string, d *walkDir) {
	s.names = append(s.names, name)
	s.dirs = append(s.dirs, d)
	s.held++
	s.evict()
}

// pop closes the last level's handle, if open, and removes the level.
func (s *treeDirs) pop() {
	last := len(s.dirs) - 1
	s.drop(last)
	s.names, s.dirs = s.names[:last], s.dirs[:last]
	s.low = min(s.low, last)
}

// drop closes the handle of a level that will not need it any more.
func (s *treeDirs) drop(level int) {
	if d := s.dirs[level]; d != nil {
		d.close()
		s.dirs[level] = nil
		s.held--
	}
}

// closeAll closes every open handle.
func (s *treeDirs) closeAll() {
	for len(s.dirs) > 0 {
		s.pop()
	}
}

// get returns the handle of level, reopening it (and the levels above it
// back to the nearest open one) if it was closed to stay under
// treeMaxHandles.
func (s *treeDirs) get(level int) (*walkDir, error) {
	if d := s.dirs[level]; d != nil {
		return d, nil
	}
	from := level - 1
	for s.dirs[from] == nil { // level 0 is never closed by evict
		from--
	}
	for i := from + 1; i <= level; i++ {
		d, err := s.dirs[i-1].openSub(s.names[i])
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

// evict closes the shallowest handles below level 0 while more than
// treeMaxHandles are open.
func (s *treeDirs) evict() {
	limit := max(treeMaxHandles, 3) // the top, a folder and the one opened below it
	if s.low == 0 {
		s.low = 1
	}
	for s.held > limit && s.low < len(s.dirs) {
		s.drop(s.low)
		s.low++
	}
}
