package codetools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/fsmode"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

func (c *CodeTools) fileInfoSpec() toolSpec {
	return makeSpec("file_info",
		"Describe one path without reading all of it: its type (file, directory, or symlink with its target), "+
			"size in bytes and human-readable, permissions, modification time (RFC 3339), and for files the sniffed MIME type, "+
			"whether it is binary and, for text, its number of lines, and for files its number of names (hard links). "+
			"Use it before read_file on a file that may be large or binary; use list_directory or tree for a folder's contents.",
		schemaObject(map[string]any{
			"path": pathProperty("Path to describe, relative to the working directory (an absolute path inside it works too)."),
		}, "path"),
		llmtoolkit.Annotations{ReadOnly: true, Idempotent: true}, c.fileInfo)
}

func (c *CodeTools) fileInfo(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", "")
	rel, real, err := c.infoTarget(ctx, p)
	if err != nil {
		return "", err
	}
	linfo, err := c.root.Lstat(rel)
	if err != nil {
		return "", c.conf.FileError(p, err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "path: %s\n", shownPath(rel))
	info := linfo
	if linfo.Mode()&fs.ModeSymlink != 0 {
		target, _ := c.root.Readlink(rel)
		fmt.Fprintf(&sb, "type: symlink -> %s\n", shownName(filepath.ToSlash(target)))
		if real == "" {
			sb.WriteString("target: cannot be followed (it points outside the working directory)\n")
			info = linfo
		} else if info, err = c.root.Stat(real); err != nil {
			fmt.Fprintf(&sb, "target: cannot be followed (%s)\n", linkProblem(err))
			info = linfo
		} else {
			fmt.Fprintf(&sb, "target type: %s\n", fsmode.Short(info.Mode()))
		}
	} else {
		fmt.Fprintf(&sb, "type: %s\n", fsmode.Short(info.Mode()))
	}
	var f *os.File
	if info.Mode().IsRegular() {
		// Open without blocking and take the facts from the opened
		// descriptor: a named pipe renamed over the file since the stat
		// above is refused, never opened for reading.
		f, info, err = c.conf.Open(p, real, confine.File)
		if err != nil {
			return "", err
		}
		defer f.Close()
	}
	fmt.Fprintf(&sb, "size: %d bytes (%s)\n", info.Size(), textutil.HumanSize(info.Size()))
	fmt.Fprintf(&sb, "mode: %s (%04o)\n", info.Mode().String(), info.Mode().Perm())
	fmt.Fprintf(&sb, "modified: %s\n", info.ModTime().Format(time.RFC3339))
	if n, ok := confine.LinkCount(info); ok && info.Mode().IsRegular() {
		// The names of the file (hard links), from the opened descriptor.
		fmt.Fprintf(&sb, "links: %d\n", n)
	}
	if f != nil {
		if err := checkOneName(ctx, p, info); err != nil {
			// Its other names may be denied: its contents are not read.
			fmt.Fprintf(&sb, "contents: not read (%d names, and the host's permission rules see one only)\n", linkCount(info))
			f = nil
		}
	}
	if f != nil {
		head, err := textutil.ReadHead(f)
		if err != nil {
			return "", c.conf.FileError(p, err)
		}
		mime, binary := sniffMIME(head)
		fmt.Fprintf(&sb, "mime: %s\n", mime)
		fmt.Fprintf(&sb, "binary: %t\n", binary)
		if !binary {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return "", c.conf.FileError(p, err)
			}
			r := lineReader{br: newReader(ctx, f)}
			n, err := r.countRest()
			if err != nil {
				return "", c.scanError(p, "while counting its lines", err)
			}
			fmt.Fprintf(&sb, "lines: %d\n", n)
		}
	}
	return strings.TrimSuffix(sb.String(), "\n"), nil
}

// infoTarget is file_info's canonical function. It returns the path
// described (the folders above resolved by [CodeTools.canonical], the last
// step kept as named: a link there is described as a link) and the path
// whose facts and content are read (where links lead; "" when a last-step
// link leads outside the root, which is then described, never followed).
// A path whose folders lead outside the root is an error.
func (c *CodeTools) infoTarget(ctx context.Context, p string) (described, real string, err error) {
	rel, err := c.conf.Rel("path", p, false)
	if err != nil {
		return "", "", err
	}
	described = rel
	if dir, base := filepath.Split(rel); dir != "" {
		d, err := c.conf.Resolve(ctx, "path", p, filepath.Clean(dir))
		if err != nil {
			return "", "", err
		}
		described = filepath.Join(d, base)
	}
	real, err = c.conf.Resolve(ctx, "path", p, described)
	if errors.Is(err, ErrOutsideRoot) {
		return described, "", nil
	}
	if err != nil {
		return "", "", err
	}
	return described, real, nil
}

// infoPathFact declares file_info's "path" argument: the path whose facts
// it reads, the link itself when its target is outside the root.
func (c *CodeTools) infoPathFact() *llmtoolkit.PathArguments {
	return pathFact(func(ctx context.Context, p string) (string, error) {
		described, real, err := c.infoTarget(ctx, p)
		if real == "" {
			return described, err
		}
		return real, err
	})
}

// linkCount is the link count of info, 0 where the system gives none.
func linkCount(info fs.FileInfo) uint64 {
	n, _ := confine.LinkCount(info)
	return n
}

// linkProblem says why a link cannot be followed.
func linkProblem(err error) string {
	if confine.IsEscape(err) {
		return "it points outside the working directory"
	}
	if strings.Contains(err.Error(), "no such file") {
		return "its target does not exist"
	}
	return err.Error()
}

// sniffMIME returns the MIME type of a file whose first bytes are head, as
// net/http.DetectContentType sees it, and whether the file is binary (a NUL
// byte in its first textutil.SniffLen bytes).
func sniffMIME(head []byte) (mime string, binary bool) {
	return http.DetectContentType(head), textutil.IsBinary(head)
}
