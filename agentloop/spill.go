package agentloop

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/atomicfile"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// minSpillBytes is the smallest ContextPolicy.SpillBytes.
const minSpillBytes = 1024

// spillNoteFile precedes the quoted path in a spilled result's note.
const spillNoteFile = "was saved to the file "

// spiller writes the spill files of one loop.
type spiller struct {
	root, dir string // ContextPolicy.SpillRoot and SpillDir
	own       string // this loop's subfolder when the run has no ID
	mu        sync.Mutex
	used      map[string]bool // subfolders written, relative to root
}

func newSpiller(p ContextPolicy) *spiller {
	if p.SpillBytes == 0 {
		return nil
	}
	return &spiller{root: p.SpillRoot, dir: p.SpillDir, own: "run-" + strings.ToLower(rand.Text()[:16]), used: map[string]bool{}}
}

// folder is the subfolder, relative to the root, of the run ctx belongs
// to: named after its run ID, so that a resumed durable run finds its
// files, else after this loop.
func (s *spiller) folder(ctx context.Context) string {
	name := s.own
	if id := llmtoolkit.ScopeFrom(ctx).RunID; id != "" {
		sum := sha256.Sum256([]byte(id))
		name = "run-" + hex.EncodeToString(sum[:8])
	}
	return path.Join(s.dir, name)
}

// spill writes content, the result of call i of iteration n, to a file
// and returns what the model gets instead: the head, a note with the
// file's path and the lines left out, and the tail.
func (l *loop) spill(ctx context.Context, n, i int, call llmtoolkit.Call, content string) (string, error) {
	s := l.spiller
	dir := s.folder(ctx)
	name := fmt.Sprintf("%d-%d-%s.txt", n, i, safeName(call.Name))
	if err := s.write(dir, name, content); err != nil {
		return content, err
	}
	rel := path.Join(dir, name)
	half := l.opts.ContextPolicy.SpillBytes / 2
	head := textutil.CutUTF8(content, half)
	tail := textutil.CutUTF8Start(content[len(head):], half)
	from := strings.Count(content[:len(content)-len(tail)], "\n") + 1
	lines := strings.Count(content, "\n") + 1
	firstHidden := strings.Count(head, "\n") + 1
	note := fmt.Sprintf("\n[... %d bytes not shown (lines %d-%d of %d). The whole result (%d bytes) %s%s: read it with read_file (offset, limit) or search it with grep]\n",
		len(content)-len(head)-len(tail), firstHidden, from, lines, len(content), spillNoteFile, strconv.Quote(rel))
	return head + note + tail, nil
}

// write writes data to dir/name inside the root, through an os.Root.
func (s *spiller) write(dir, name, data string) error {
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return fmt.Errorf("spill folder: %w", err)
	}
	defer root.Close()
	if err := root.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("spill folder: %w", err)
	}
	// Keep the spill files out of git and of the walks over the whole
	// workspace (grep, glob, tree honour .gitignore files); a path named
	// inside the folder is still read.
	if _, err := root.Lstat(path.Join(s.dir, ".gitignore")); errors.Is(err, os.ErrNotExist) {
		if err := atomicfile.WriteFile(root, path.Join(s.dir, ".gitignore"), []byte("# llmtoolkit's spilled tool results\n*\n"), 0o644); err != nil {
			return fmt.Errorf("spill folder: %w", err)
		}
	}
	s.mu.Lock()
	s.used[dir] = true
	s.mu.Unlock()
	return atomicfile.WriteFile(root, path.Join(dir, name), []byte(data), 0o600)
}

// removeAll removes the subfolders this loop wrote.
func (s *spiller) removeAll() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.used) == 0 {
		return nil
	}
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return fmt.Errorf("spill folder: %w", err)
	}
	defer root.Close()
	var errs []error
	for dir := range s.used {
		if err := root.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
		delete(s.used, dir)
	}
	return errors.Join(errs...)
}

// RemoveSpillFiles removes the spill files of the run whose ID is runID
// ([llmtoolkit.Scope].RunID of its context), for a durable run (whose Run
// leaves them, see [ContextPolicy.KeepSpillFiles]) once it is over.
func (p ContextPolicy) RemoveSpillFiles(runID string) error {
	if p.SpillRoot == "" || runID == "" {
		return nil
	}
	if p.SpillDir == "" {
		p.SpillDir = DefaultSpillDir
	}
	s := &spiller{root: p.SpillRoot, dir: p.SpillDir, used: map[string]bool{}}
	s.used[s.folder(llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.RunID = runID }))] = true
	return s.removeAll()
}

// maybeSpill spills res when the policy asks for it; a spill that fails
// is logged and the result kept (then cut as usual).
func (l *loop) maybeSpill(ctx context.Context, n, i int, call llmtoolkit.Call, res *llmtoolkit.Result) {
	if l.spiller == nil || len(res.Content) <= l.opts.ContextPolicy.SpillBytes {
		return
	}
	before := res.Content
	// The file is stored: like the trace rows, it holds no declared
	// secret of the run (the model's copy, its head and tail, is the same
	// text, so that the note's counts are the file's).
	out, err := l.spill(ctx, n, i, call, l.scrub(before))
	if err != nil {
		l.opts.Logger.WarnContext(ctx, "agentloop: a tool result could not be spilled to a file; it is kept in the history",
			slog.Int("iteration", n), slog.String("tool", call.Name), slog.String("error", err.Error()))
		return
	}
	res.Content = out
	p, _ := spilledPath(out)
	l.report(ctx, ContextChange{Kind: EventResultSpilled, Iteration: n, Call: call, Path: p, Messages: 1,
		TokensBefore: len(before) / BytesPerToken, TokensAfter: len(out) / BytesPerToken})
}

// safeName keeps the letters, digits, '-' and '_' of a tool's name, at
// most 40 of them.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "tool"
	}
	return b.String()
}
