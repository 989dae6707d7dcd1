package codetools

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
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

// treeWalker walks a folder through the root.
type treeWalker struct {
	c        *CodeTools
	ctx      context.Context
	depth    int
	scanned  int
	maxScan  int
	partial  bool
	nodes    int // nodes kept
	depthCut bool
}

func (c *CodeTools) tree(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", ".")
	rel, err := c.rel("path", p, true)
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
	if _, err := c.readDir(p, rel); err != nil {
		return "", err
	}
	w := &treeWalker{c: c, ctx: ctx, depth: depth, maxScan: c.cfg.treeMaxScan}
	walkState, err := c.treeIgnore(rel)
	if err != nil {
		return "", err
	}
	root := &treeNode{name: p, dir: true}
	if err := w.walk(root, rel, 0, walkState); err != nil {
		return "", err
	}

	var sb strings.Builder
	name := strings.TrimSuffix(p, "/")
	if name == "" {
		name = "."
	}
	fmt.Fprintf(&sb, "%s/ (%s)\n", name, textutil.HumanSize(root.size))
	r := treeRenderer{sb: &sb, limit: limit}
	r.render(root, "")
	fmt.Fprintf(&sb, "\n%d %s, %d %s", r.dirs, plural(r.dirs, "directory", "directories"), r.files, plural(r.files, "file", "files"))
	var notices []string
	if r.shown < w.nodes {
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
	return sb.String(), nil
}

// walk fills n, the folder at rel, level folders below the tree's top.
func (w *treeWalker) walk(n *treeNode, rel string, level int, st *ignoreState) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	f, err := w.c.root.Open(rel)
	if err != nil {
		n.problem = "unreadable"
		return nil
	}
	entries, err := f.ReadDir(-1)
	_ = f.Close()
	if err != nil {
		n.problem = "unreadable"
	}
	sortEntries(entries)
	n.expanded = level < w.depth
	for _, e := range entries {
		if w.partial {
			return nil
		}
		name := e.Name()
		childRel := filepath.Join(rel, name)
		isDir := e.IsDir()
		if name == ".git" || st.ignored(childRel, isDir) {
			continue
		}
		if w.scanned++; w.scanned > w.maxScan {
			w.partial = true
			return nil
		}
		child := &treeNode{name: name, dir: isDir}
		switch {
		case isDir:
			sub, err := st.child(w.c, childRel)
			if err != nil {
				return err
			}
			if err := w.walk(child, childRel, level+1, sub); err != nil {
				return err
			}
			n.entries += child.entries
		case e.Type()&fs.ModeSymlink != 0:
			child.link, _ = w.c.root.Readlink(childRel)
			if child.link == "" {
				child.link = "?"
			}
		default:
			if info, err := e.Info(); err == nil {
				child.size = info.Size()
			}
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

// treeRenderer draws the tree.
type treeRenderer struct {
	sb           *strings.Builder
	limit, shown int
	dirs, files  int
	stopped      bool
}

func (r *treeRenderer) render(n *treeNode, prefix string) {
	for i, ch := range n.children {
		if r.shown == r.limit {
			r.stopped = true
			return
		}
		r.shown++
		branch, next := "├── ", "│   "
		if i == len(n.children)-1 {
			branch, next = "└── ", "    "
		}
		r.sb.WriteString(prefix + branch + ch.label() + "\n")
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

// label is how a node is drawn.
func (n *treeNode) label() string {
	switch {
	case n.link != "":
		return n.name + " -> " + n.link
	case !n.dir:
		return fmt.Sprintf("%s (%s)", n.name, textutil.HumanSize(n.size))
	case n.problem != "":
		return fmt.Sprintf("%s/ (%s)", n.name, n.problem)
	case !n.expanded && n.entries > 0:
		return fmt.Sprintf("%s/ (%s, %d more inside)", n.name, textutil.HumanSize(n.size), n.entries)
	}
	return fmt.Sprintf("%s/ (%s)", n.name, textutil.HumanSize(n.size))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
