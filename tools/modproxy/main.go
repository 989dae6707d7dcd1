// Command modproxy lays out this repository's modules as a Go module proxy
// on disk, each at the version versions.txt names, as the Go command would
// serve them from their tags: the zip is made by golang.org/x/mod/zip from
// the files git knows in the work tree (tracked, or new and not ignored),
// with the same rules (nested modules, vendor folders and invalid names left
// out, sizes capped). No tag needs to exist.
//
//	go run ./tools/modproxy -root . -out DIR
//
// Then GOPROXY=file://DIR,https://proxy.golang.org serves llmtoolkit's
// modules from DIR and every other module as usual.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	root := flag.String("root", ".", "the repository's root (holds versions.txt)")
	out := flag.String("out", "", "the proxy's folder (made if missing)")
	versions := flag.String("versions", "", "the versions file (default ROOT/versions.txt)")
	flag.Parse()
	if *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if *versions == "" {
		*versions = filepath.Join(*root, "versions.txt")
	}
	if err := run(*root, *versions, *out); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

// A release is one module of versions.txt: its folder and version.
type release struct {
	folder, version string
}

func run(root, versions, out string) error {
	rels, err := readVersions(versions)
	if err != nil {
		return err
	}
	files, err := gitFiles(root)
	if err != nil {
		return err
	}
	for _, rel := range rels {
		modPath, err := serve(root, out, rel, files)
		if err != nil {
			return fmt.Errorf("%s: %w", rel.folder, err)
		}
		fmt.Printf("%s@%s\n", modPath, rel.version)
	}
	return nil
}

// readVersions reads versions.txt: lines "FOLDER VERSION [RELEASED]",
// comments after #.
func readVersions(name string) ([]release, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var rels []release
	for i, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 {
			return nil, fmt.Errorf("%s:%d: want FOLDER VERSION", name, i+1)
		}
		rels = append(rels, release{folder: path.Clean(fields[0]), version: fields[1]})
	}
	if len(rels) == 0 {
		return nil, fmt.Errorf("%s names no module", name)
	}
	return rels, nil
}

// gitFiles lists the files git knows under root (slash paths relative to
// root): tracked ones still present, and new ones not ignored.
func gitFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w: %s", err, stderr.String())
	}
	var files []string
	for _, f := range strings.Split(string(outb), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// serve writes rel's list, .info, .mod and .zip under out and returns its
// module path.
func serve(root, out string, rel release, files []string) (string, error) {
	dir := filepath.Join(root, filepath.FromSlash(rel.folder))
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	modPath := modfile.ModulePath(gomod)
	if modPath == "" {
		return "", errors.New("go.mod names no module")
	}
	m := module.Version{Path: modPath, Version: rel.version}
	if err := module.Check(m.Path, m.Version); err != nil {
		return "", err
	}
	escaped, err := module.EscapePath(modPath)
	if err != nil {
		return "", err
	}
	vdir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return "", err
	}

	prefix := ""
	if rel.folder != "." {
		prefix = rel.folder + "/"
	}
	var zfiles []zip.File
	for _, f := range files {
		if !strings.HasPrefix(f, prefix) {
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(f))
		info, err := os.Lstat(full)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			return "", err
		}
		zfiles = append(zfiles, diskFile{slash: strings.TrimPrefix(f, prefix), full: full, info: info})
	}
	zf, err := os.Create(filepath.Join(vdir, rel.version+".zip"))
	if err != nil {
		return "", err
	}
	if err := zip.Create(zf, m, zfiles); err != nil {
		zf.Close()
		return "", err
	}
	if err := zf.Close(); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(vdir, rel.version+".mod"), gomod, 0o644); err != nil {
		return "", err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{rel.version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(vdir, rel.version+".info"), info, 0o644); err != nil {
		return "", err
	}
	return modPath, appendList(filepath.Join(vdir, "list"), rel.version)
}

// appendList adds version to a proxy's list file unless it is there.
func appendList(name, version string) error {
	data, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, v := range strings.Fields(string(data)) {
		if v == version {
			return nil
		}
	}
	return os.WriteFile(name, append(data, version+"\n"...), 0o644)
}

// diskFile is a file of the work tree, as golang.org/x/mod/zip reads it.
type diskFile struct {
	slash, full string
	info        os.FileInfo
}

func (f diskFile) Path() string                 { return f.slash }
func (f diskFile) Lstat() (os.FileInfo, error)  { return f.info, nil }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.full) }
