package search

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchFiles are the .go files of a part of GOROOT/src, read once.
var benchFiles = func() func(b *testing.B) map[string][]byte {
	var files map[string][]byte
	return func(b *testing.B) map[string][]byte {
		if files != nil {
			return files
		}
		goroot, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			b.Skipf("go env GOROOT: %v", err)
		}
		root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
		files = map[string][]byte{}
		for _, dir := range []string{"net", "go", "crypto", "runtime"} {
			_ = filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".go") {
					if data, err := os.ReadFile(p); err == nil {
						files[p[len(root)+1:]] = data
					}
				}
				return nil
			})
		}
		if len(files) == 0 {
			b.Skip("no GOROOT sources")
		}
		return files
	}
}()

// BenchmarkEngineKinds searches files in memory and writes the whole
// answer with its items, for the pattern kinds of bench/grep.sh that cost
// the most against ripgrep: the engine's time without the walk and reads.
func BenchmarkEngineKinds(b *testing.B) {
	files := benchFiles(b)
	size := 0
	for _, d := range files {
		size += len(d)
	}
	type item struct {
		path string
		line int
		text string
	}
	for _, k := range []struct {
		name, pattern       string
		literal, ignoreCase bool
	}{
		{"err", "err", false, false},
		{"err-i", "err", false, true},
		{"func", "^func", false, false},
		{"alt-i", "dial|listen|accept", false, true},
		{"date", "[0-9]{4}-[0-9]{2}-[0-9]{2}", false, false},
		{"funcerror-i", "func.*error", false, true},
		{"literal", "NewReplacer(", true, false},
	} {
		b.Run(k.name, func(b *testing.B) {
			q, err := Compile(k.pattern, k.literal, k.ignoreCase, 0)
			if err != nil {
				b.Fatal(err)
			}
			s := NewSearcher(q, 1<<30, 0)
			b.SetBytes(int64(size))
			for b.Loop() {
				col := NewCollector(1 << 30)
				for rel, data := range files {
					res, err := s.Search(context.Background(), bytes.NewReader(data))
					if err != nil {
						b.Fatal(err)
					}
					if res.Matches() > 0 {
						col.Add(rel, res)
					}
				}
				a, err := Write(col, Options[item]{MaxBytes: 1 << 40, Item: func(p string, l int, t string) item { return item{p, l, t} }})
				if err != nil || a.Total == 0 {
					b.Fatal(err, a.Total)
				}
			}
		})
	}
}
