package proc

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// Defaults and bounds of bash's spill files (codetools' WithBashSpillLimit
// and WithBashSpillRetention).
const (
	DefaultSpillMaxBytes = 16 << 20
	MinSpillMaxBytes     = 64 << 10
	DefaultSpillMaxFiles = 16
	spillMarkerMax       = 256 // room kept for the marker where the middle is cut
	SpillPattern         = "llmtoolkit-bash-*.log"
)

// ErrClosed is returned by [SpillFiles.Create] after [SpillFiles.Close].
var ErrClosed = fmt.Errorf("the spill files are closed: %w", os.ErrClosed)

// SpillFile holds a command's output on disk in at most limit bytes: the
// first half (limit/2 bytes) as written, then a ring holding the latest
// bytes (the rest, less 256 bytes kept for the marker). Finish turns
// the ring back into order and puts a marker where the middle was cut, so the
// file reads as head, marker, tail.
type SpillFile struct {
	f     *os.File
	limit int64 // the largest size of the finished file
	head  int64 // bytes kept from the start
	ring  int64 // bytes kept from the end
	n     int64 // bytes written in all
	err   error // the first write error; later writes are dropped
	cut   bool  // set by Finish: the middle was cut out
}

// NewSpillFile returns a SpillFile writing to f, keeping at most limit
// bytes: half from the start, the rest from the end.
func NewSpillFile(f *os.File, limit int64) *SpillFile {
	head := limit / 2
	return &SpillFile{f: f, limit: limit, head: head, ring: limit - head - spillMarkerMax}
}

// Write stores p: into the head while it has room, then into the ring,
// overwriting the oldest bytes there.
func (s *SpillFile) Write(p []byte) (int, error) {
	written := len(p)
	if s.err != nil {
		return written, nil
	}
	if s.n < s.head {
		k := int(min(int64(len(p)), s.head-s.n))
		if _, err := s.f.WriteAt(p[:k], s.n); err != nil {
			s.err = err
			return written, nil
		}
		s.n += int64(k)
		p = p[k:]
	}
	if int64(len(p)) > s.ring { // only the last ring bytes of p survive
		skip := int64(len(p)) - s.ring
		s.n += skip
		p = p[skip:]
	}
	for len(p) > 0 {
		pos := (s.n - s.head) % s.ring
		k := int(min(int64(len(p)), s.ring-pos))
		if _, err := s.f.WriteAt(p[:k], s.head+pos); err != nil {
			s.err = err
			return written, nil
		}
		s.n += int64(k)
		p = p[k:]
	}
	return written, nil
}

// Finish puts the file in reading order and closes it. When the output did
// not fit, the ring is rotated in place (the file briefly grows by at most
// the ring's size) and a marker line replaces the middle.
func (s *SpillFile) Finish() error {
	if s.err == nil && s.n > s.head+s.ring {
		s.cut = true
		s.err = s.rotate()
	}
	if err := s.f.Close(); err != nil && s.err == nil {
		s.err = err
	}
	return s.err
}

func (s *SpillFile) rotate() error {
	oldest := (s.n - s.head) % s.ring // the ring is [oldest, ring) then [0, oldest)
	marker := fmt.Sprintf("\n\n[... %s cut here: this file keeps the first %s and the last %s of %s (%d bytes) ...]\n\n",
		textutil.HumanSize(s.n-s.head-s.ring), textutil.HumanSize(s.head), textutil.HumanSize(s.ring), textutil.HumanSize(s.n), s.n)
	m := int64(len(marker))
	buf := make([]byte, 64<<10)
	// [head][new: 0..oldest][old: oldest..ring] -> append new -> move old+new down after the marker.
	if err := moveWithin(s.f, buf, s.head+s.ring, s.head, oldest); err != nil {
		return err
	}
	if err := moveWithin(s.f, buf, s.head+m, s.head+oldest, s.ring); err != nil {
		return err
	}
	if _, err := s.f.WriteAt([]byte(marker), s.head); err != nil {
		return err
	}
	return s.f.Truncate(s.head + m + s.ring)
}

// moveWithin copies n bytes of f from offset src to offset dst, like
// memmove: the regions may overlap.
func moveWithin(f *os.File, buf []byte, dst, src, n int64) error {
	if n == 0 || dst == src {
		return nil
	}
	step := int64(len(buf))
	for done := int64(0); done < n; {
		k := min(step, n-done)
		off := done // front to back when moving down
		if dst > src {
			off = n - done - k // back to front when moving up
		}
		if _, err := f.ReadAt(buf[:k], src+off); err != nil {
			return err
		}
		if _, err := f.WriteAt(buf[:k], dst+off); err != nil {
			return err
		}
		done += k
	}
	return nil
}

// SpillFiles keeps track of the spill files of one CodeTools, so that they
// are removed after the retention limits and by Close (codetools' CodeTools.Close).
type SpillFiles struct {
	mu     sync.Mutex
	closed bool
	live   map[string]bool // being written
	kept   []*keptSpill    // finished, oldest first
	failed []error         // removals that failed, retried by Close
	dir    *spillDir       // the folder, opened once
}

// spillDir is the spill folder, held open: files are made and removed
// through its handle, so that replacing the folder by a link (a command can
// when it lies inside the root) never moves them elsewhere.
type spillDir struct {
	path     string   // as configured
	resolved string   // its link-free path when first opened
	root     *os.Root // the folder first opened
}

type keptSpill struct {
	path  string
	timer *time.Timer // removes it after the age limit; nil without one
}

// Create makes a new spill file in dir (the system temp folder when empty),
// creating dir if needed. The folder is opened once and files are made
// through its handle; if the path later names another folder (replaced by a
// link, or a folder elsewhere), it is refused rather than followed.
func (s *SpillFiles) Create(dir string) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if dir == "" {
		dir = os.TempDir()
	}
	d, err := s.openDirLocked(dir)
	if err != nil {
		return nil, err
	}
	var f *os.File
	for range 100 {
		name := strings.Replace(SpillPattern, "*", rand.Text()[:12], 1)
		f, err = d.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("spill file: %w", err)
	}
	if s.live == nil {
		s.live = map[string]bool{}
	}
	s.live[f.Name()] = true
	return f, nil
}

// openDirLocked returns the open spill folder for path, opening it the
// first time and checking, each time, that path still leads to it.
func (s *SpillFiles) openDirLocked(path string) (*spillDir, error) {
	if d := s.dir; d != nil && d.path == path {
		now, err := os.Stat(d.resolved)
		held, herr := d.root.Stat(".")
		if err == nil && herr == nil && os.SameFile(now, held) {
			if real, err := filepath.EvalSymlinks(path); err == nil && real == d.resolved {
				return d, nil
			}
		}
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("spill folder %s was replaced (by a link or another folder) since it was opened: refused; remove it or set WithBashSpillDir to a folder commands cannot change", path)
		}
		// removed: made again below, then checked like the first time
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("spill folder: %w", err)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("spill folder: %w", err)
	}
	if s.dir != nil && s.dir.path == path && real != s.dir.resolved {
		return nil, fmt.Errorf("spill folder %s now leads to %s: refused; remove it or set WithBashSpillDir to a folder commands cannot change", path, real)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("spill folder: %w", err)
	}
	if s.dir != nil {
		s.dir.root.Close()
	}
	s.dir = &spillDir{path: path, resolved: real, root: root}
	return s.dir, nil
}

// Keep records that path is finished: it is removed after maxAge (when > 0)
// and when more than maxFiles are kept, oldest first. A file finished after
// Close is removed at once.
func (s *SpillFiles) Keep(path string, maxAge time.Duration, maxFiles int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, path)
	if s.closed {
		s.removeLocked(path)
		if s.dir != nil && len(s.live) == 0 {
			s.dir.root.Close()
			s.dir = nil
		}
		return
	}
	k := &keptSpill{path: path}
	if maxAge > 0 {
		k.timer = time.AfterFunc(maxAge, func() { s.expire(k) })
	}
	s.kept = append(s.kept, k)
	for maxFiles > 0 && len(s.kept) > maxFiles {
		old := s.kept[0]
		s.kept = s.kept[1:]
		if old.timer != nil {
			old.timer.Stop()
		}
		s.removeLocked(old.path)
	}
}

// expire removes a file whose age limit passed. It runs on its own
// goroutine (time.AfterFunc's): a panic is logged with its stack
// (internal/guard) and recorded for Close instead of crashing the host.
func (s *SpillFiles) expire(k *keptSpill) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer guard.Recover("bash spill file expiry", nil, func(err error) {
		s.failed = append(s.failed, fmt.Errorf("remove spill file %s: %w", k.path, err))
	})
	for i, kk := range s.kept {
		if kk == k {
			s.kept = append(s.kept[:i], s.kept[i+1:]...)
			s.removeLocked(k.path)
			return
		}
	}
}

// removeLocked removes path; a failure is kept for Close, which retries it.
func (s *SpillFiles) removeLocked(path string) {
	if err := s.removeFile(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.failed = append(s.failed, err)
	}
}

// removeFile removes a spill file through the folder's handle (never
// through a link that replaced the folder).
func (s *SpillFiles) removeFile(path string) error {
	if s.dir == nil || filepath.Dir(path) != s.dir.resolved {
		return &os.PathError{Op: "remove", Path: path, Err: errors.New("not in the spill folder")}
	}
	if err := s.dir.root.Remove(filepath.Base(path)); err != nil {
		return &os.PathError{Op: "remove", Path: path, Err: errors.Unwrap(err)}
	}
	return nil
}

// Close removes every spill file still kept and refuses new ones. Files
// still being written are removed when their command ends. It returns the
// removals that failed, including earlier ones that fail again.
func (s *SpillFiles) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	failed := s.failed
	s.failed = nil
	var errs []error
	for _, err := range failed {
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Op == "remove" {
			if err = s.removeFile(pe.Path); err == nil || errors.Is(err, os.ErrNotExist) {
				continue
			}
		}
		errs = append(errs, err)
	}
	for _, k := range s.kept {
		if k.timer != nil {
			k.timer.Stop()
		}
		if err := s.removeFile(k.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	s.kept = nil
	if s.dir != nil && len(s.live) == 0 {
		s.dir.root.Close()
		s.dir = nil
	}
	if len(errs) > 0 {
		return fmt.Errorf("bash spill files: %w", errors.Join(errs...))
	}
	return nil
}

// Cut reports whether Finish cut the middle out of the file.
func (s *SpillFile) Cut() bool { return s.cut }

// IsClosed reports whether Close ran.
func (s *SpillFiles) IsClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
