// Command apicount counts the exported names of every Go module of a tree:
// the exported constants, variables, functions, types, methods and struct
// fields of its importable packages (test files, internal, testdata and
// main packages left out), one line per module.
//
//	go run ./tools/apicount [ROOT]
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	counts, err := count(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(1)
	}
	mods := make([]string, 0, len(counts))
	for m := range counts {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	total := 0
	for _, m := range mods {
		fmt.Printf("%-20s %5d\n", m, counts[m])
		total += counts[m]
	}
	fmt.Printf("%-20s %5d\n", "total", total)
}

// count walks root and returns the number of exported names per module
// folder (relative to root).
func count(root string) (map[string]int, error) {
	modOf := map[string]string{} // package folder -> module folder
	counts := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "internal" || name == "vendor") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		mod := modOf[filepath.Dir(rel)]
		if rel == "." {
			mod = "."
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
			mod = rel
			counts[mod] += 0
		}
		modOf[rel] = mod
		n, err := countDir(path)
		if err != nil {
			return err
		}
		counts[mod] += n
		return nil
	})
	return counts, err
}

// countDir counts the exported names of the non-main package in dir: its
// .go files but the tests, parsed one by one (build tags are not read, as a
// package's exported names seldom depend on them).
func countDir(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	fset := token.NewFileSet()
	n := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			return 0, err
		}
		if f.Name.Name == "main" {
			continue
		}
		n += countFile(f)
	}
	return n, nil
}

func countFile(f *ast.File) int {
	n := 0
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv != nil && !exportedRecv(d.Recv.List[0].Type) {
				continue
			}
			n++
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() {
							n++
						}
					}
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					n++
					n += countFields(s.Type)
				}
			}
		}
	}
	return n
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(t ast.Expr) bool {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// countFields counts the exported fields of a struct type and the exported
// methods of an interface type.
func countFields(t ast.Expr) int {
	var list *ast.FieldList
	switch x := t.(type) {
	case *ast.StructType:
		list = x.Fields
	case *ast.InterfaceType:
		list = x.Methods
	default:
		return 0
	}
	n := 0
	for _, fld := range list.List {
		for _, id := range fld.Names {
			if id.IsExported() {
				n++
			}
		}
	}
	return n
}
