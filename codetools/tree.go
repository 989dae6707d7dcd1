package codetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

func (c *CodeTools) treeSpec() toolSpec {
	return makeSpec("tree",
		fmt.Sprintf("Show a folder and what is below it as a drawn tree (├── └── │), with sizes: files their own, folders the sum of everything below them. "+
			"Goes %d levels deep and lists at most %d entries by default, with a notice when depth or limit cut it. "+
			".git is always skipped and .gitignore files are honoured (nested ones and negations too). The last line counts folders and files. "+
			"Use it to get the layout of a project; use list_directory for one folder, glob to find files by pattern, file_info for one path.",
			c.cfg.treeDepth, c.cfg.treeLimit),
		schemaObject(map[string]any{
			"path":  pathProperty("Folder to show, relative to the working directory (default \".\", the working directory itself)."),
			"depth": map[string]any{"type": "integer", "minimum": 1, "description": fmt.Sprintf("How many levels of folders to expand (default %d).", c.cfg.treeDepth)},
			"limit": map[string]any{"type": "integer", "minimum": 1, "description": fmt.Sprintf("Maximum number of entries to show (default %d).", c.cfg.treeLimit)},
		}),
		llmtoolkit.Annotations{ReadOnly: true, Idempotent: true}, c.tree)
}

// treeNode is one entry of the tree.
type treeNode struct {
	name     string
	dir      bool
	link     string // a symbolic link's target
	size     int64  // a file's size, or the sum below a folder
	entries  int    // entries below a folder, at any depth
	children []*treeNode
	expanded bool   // children were kept (within the depth)
	problem  string // why the folder could not be read
}

// treeWalker walks a folder with folder handles: each folder is opened
// with one confined step from its parent's handle, never by its whole path,
// so the walk is linear in the number of entries however deep they lie.
type treeWalker struct {
	c        *CodeTools
	ctx      context.Context
	depth    int
	scanned  int
	maxScan  int
	partial  bool
	nodes    int // nodes kept
	depthCut bool
	dirs     walk.Stack
	path     []byte // the path from the root to the folder being listed
	ex       *exclusions
}

func (c *CodeTools) tree(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", ".")
	rel, err := c.canonical(ctx, "path", p, true)
	if err != nil {
		return "", err
	}
	depth := intArg(args, "depth", c.cfg.treeDepth)
	if depth <= 0 {
		depth = c.cfg.treeDepth
	}
	limit := intArg(args, "limit", c.cfg.treeLimit)
	if limit <= 0 {
		limit = c.cfg.treeLimit
	}
	ctx, ex := bindExclusions(ctx)
	if err := ex.refuseStart("path", p, rel); err != nil {
		return "", err
	}
	top, err := walk.OpenStart(c.conf, p, rel)
	if err != nil {
		if _, serr := c.root.Lstat(rel); errors.Is(serr, fs.ErrNotExist) {
			return "", fmt.Errorf("path not found: %s", p)
		}
		return "", err
	}
	w := &treeWalker{c: c, ctx: ctx, depth: depth, maxScan: c.cfg.treeMaxScan, ex: ex}
	w.dirs.Limit = treeMaxHandles
	w.dirs.Push("", top)
	defer w.dirs.CloseAll()
	walkState, err := walk.RulesAt(ctx, c.conf, rel)
	if err != nil {
		return "", err
	}
	if rel != "." {
		w.path = append(w.path, rel...)
	}
	root := &treeNode{name: p, dir: true}
	if err := w.walk(root, 0, walkState); err != nil {
		return "", err
	}

	var sb strings.Builder
	name := strings.TrimSuffix(readName(p), "/")
	if name == "" {
		name = "."
	}
	name = shownName(name)
	fmt.Fprintf(&sb, "%s/ (%s)\n", name, textutil.HumanSize(root.size))
	r := treeRenderer{sb: &sb, limit: limit, maxBytes: treeMaxBytes}
	r.render(root, "")
	fmt.Fprintf(&sb, "\n%d %s, %d %s", r.dirs, plural(r.dirs, "directory", "directories"), r.files, plural(r.files, "file", "files"))
	var notices []string
	switch {
	case r.cut:
		notices = append(notices, fmt.Sprintf("[Output cut at %s after %d of %d entries. Use a smaller depth or limit, or call tree on a subfolder.]",
			textutil.HumanSize(treeMaxBytes), r.shown, w.nodes))
	case r.shown < w.nodes:
		notices = append(notices, fmt.Sprintf("[Entry limit %d reached: %d more entries not shown. Use limit=%d, or call tree on a subfolder.]",
			limit, w.nodes-r.shown, w.nodes))
	}
	if w.depthCut {
		notices = append(notices, fmt.Sprintf("[Depth limit %d reached: folders marked \"more inside\" were not expanded. Use depth=%d, or call tree on one of them.]",
			depth, depth+1))
	}
	if w.partial {
		notices = append(notices, fmt.Sprintf("[The walk stopped after %d entries: the listing is partial and folder sizes are lower bounds.]", w.maxScan))
	}
	if len(notices) > 0 {
		sb.WriteString("\n\n" + strings.Join(notices, "\n"))
	}
	sb.WriteString(ex.note())
	return sb.String(), nil
}

// treeEntry is an entry of a folder that the tree counts.
type treeEntry struct {
	name  string
	isDir bool
	link  string // a symbolic link's target
	size  int64
}

// walk fills n, the folder at w.path whose handle is w.dirs' top, level
// folders below the tree's top; st holds the .gitignore rules of the
// folders above it.
func (w *treeWalker) walk(n *treeNode, level int, st *walk.Rules) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	d, err := w.dirs.Get(level)
	if err != nil {
		n.problem = "unreadable"
		return nil
	}
	entries, err := d.Entries()
	if err != nil {
		n.problem = "unreadable"
	}
	sortEntries(entries)
	if level > 0 { // the top's own rules came with RulesAt
		for _, e := range entries {
			if e.Name() == ".gitignore" { // without one, child would find nothing
				st = st.Child(w.c.conf, string(w.path))
				break
			}
		}
	}
	kept, lastDir, err := w.keep(d, entries, st)
	if err != nil {
		return err
	}
	n.expanded = level < w.depth
	plen := len(w.path)
	for i, k := range kept {
		if w.partial {
			return nil
		}
		if w.scanned++; w.scanned > w.maxScan {
			w.partial = true
			return nil
		}
		child := &treeNode{name: k.name, dir: k.isDir, link: k.link, size: k.size}
		if k.isDir {
			if err := w.enter(child, level, plen, k.name, i == lastDir, st); err != nil {
				return err
			}
			n.entries += child.entries
		}
		n.size += child.size
		n.entries++
		if n.expanded {
			n.children = append(n.children, child)
			w.nodes++
		}
	}
	if !n.expanded && n.entries > 0 {
		w.depthCut = true
	}
	return nil
}

// keep returns the entries of folder d that the tree counts (not .git, not
// ignored), at most as many as the scan has room for, with the sizes of
// files and the targets of links, and the index of the last folder among
// them (-1 when there is none).
func (w *treeWalker) keep(d *walk.Dir, entries []fs.DirEntry, st *walk.Rules) (kept []treeEntry, lastDir int, err error) {
	room := w.maxScan - w.scanned + 1 // one more marks the walk partial
	plen := len(w.path)
	lastDir = -1
	for i, e := range entries {
		if len(kept) == room {
			break
		}
		if i%256 == 255 {
			if err := w.ctx.Err(); err != nil {
				return nil, -1, err
			}
		}
		name := e.Name()
		isDir := e.IsDir()
		if name == ".git" {
			continue
		}
		// The path is only built where there are rules to match it: in a
		// deep tree it is long.
		if !st.Empty() && st.Ignored(string(w.join(plen, name)), isDir) {
			continue
		}
		if w.ex != nil && w.ex.excluded(string(w.join(plen, name))) {
			continue
		}
		k := treeEntry{name: name, isDir: isDir}
		switch {
		case isDir:
			lastDir = len(kept)
		case e.Type()&fs.ModeSymlink != 0:
			if k.link, _ = d.Readlink(name); k.link == "" {
				k.link = "?"
			}
		default:
			k.size, _ = d.Size(name)
		}
		kept = append(kept, k)
	}
	w.path = w.path[:plen]
	return kept, lastDir, nil
}

// enter walks child, the subfolder name of the folder at level whose path
// is w.path[:plen]. When it is the folder's last subfolder, the folder's
// handle is closed first: a chain of folders holds two handles at most.
func (w *treeWalker) enter(child *treeNode, level, plen int, name string, last bool, st *walk.Rules) error {
	d, err := w.dirs.Get(level)
	var sub *walk.Dir
	if err == nil {
		sub, err = d.OpenSub(name)
	}
	if last {
		w.dirs.Drop(level)
	}
	if err != nil {
		child.problem = "unreadable"
		return nil
	}
	w.path = w.join(plen, name)
	w.dirs.Push(name, sub)
	err = w.walk(child, level+1, st)
	w.dirs.Pop()
	w.path = w.path[:plen]
	return err
}

// join sets w.path to its first plen bytes, then name below them.
func (w *treeWalker) join(plen int, name string) []byte {
	w.path = w.path[:plen]
	if plen > 0 {
		w.path = append(w.path, filepath.Separator)
	}
	w.path = append(w.path, name...)
	return w.path
}

// treeMaxHandles bounds the folder handles a tree walk holds at once
// ([walk.Stack]), so that a deep tree cannot take the process's
// descriptors. A variable for the tests.
var treeMaxHandles = walk.DefaultMaxHandles

// treeMaxBytes caps the drawing: in a deep tree each line is longer than
// the one above it (a 30,000-deep chain drawn whole would take 1.8 GB).
const treeMaxBytes = 64 << 10

// treeRenderer draws the tree, at most limit entries and maxBytes bytes.
type treeRenderer struct {
	sb           *strings.Builder
	limit, shown int
	maxBytes     int
	dirs, files  int
	stopped      bool
	cut          bool // stopped by maxBytes
}

func (r *treeRenderer) render(n *treeNode, prefix string) {
	for i, ch := range n.children {
		if r.shown == r.limit {
			r.stopped = true
			return
		}
		branch, next := "├── ", "│   "
		if i == len(n.children)-1 {
			branch, next = "└── ", "    "
		}
		label := ch.label()
		if r.sb.Len()+len(prefix)+len(branch)+len(label)+1 > r.maxBytes {
			r.stopped, r.cut = true, true
			return
		}
		r.shown++
		r.sb.WriteString(prefix + branch + label + "\n")
		if ch.dir {
			r.dirs++
			r.render(ch, prefix+next)
			if r.stopped {
				return
			}
		} else {
			r.files++
		}
	}
}

// label is how a node is drawn; its name and its link's target as
// shownName shows them, so none can forge a line.
func (n *treeNode) label() string {
	name := shownName(n.name)
	switch {
	case n.link != "":
		if n.link == "?" {
			return name + " -> ?"
		}
		return name + " -> " + shownName(filepath.ToSlash(n.link))
	case !n.dir:
		return fmt.Sprintf("%s (%s)", name, textutil.HumanSize(n.size))
	case n.problem != "":
		return fmt.Sprintf("%s/ (%s)", name, n.problem)
	case !n.expanded && n.entries > 0:
		return fmt.Sprintf("%s/ (%s, %d more inside)", name, textutil.HumanSize(n.size), n.entries)
	}
	return fmt.Sprintf("%s/ (%s)", name, textutil.HumanSize(n.size))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
