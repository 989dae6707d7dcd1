package gitignore

import "testing"

// benchGitignore is a typical root .gitignore (Go, Node, Python, editors).
const benchGitignore = `# Binaries
*.exe
*.exe~
*.dll
*.so
*.dylib
*.test
*.out
*.o
*.a
/bin/
/dist/
/build/
vendor/
node_modules/
__pycache__/
*.py[cod]
.venv/
.idea/
.vscode/
*.swp
*~
.DS_Store
coverage.*
/tmp
**/testdata/golden/*.got
docs/_build/**
!docs/_build/keep.txt
*.log
!important.log
`

// benchPaths look like a Go source tree; most are not ignored.
var benchPaths = []string{
	"src/net/http/server.go",
	"src/net/http/server_test.go",
	"src/runtime/proc.go",
	"src/cmd/compile/internal/ssa/rewriteAMD64.go",
	"src/cmd/go/testdata/script/mod_tidy.txt",
	"src/crypto/tls/testdata/Client-TLSv13-AES128-SHA256",
	"src/encoding/json/decode.go",
	"misc/wasm/wasm_exec.js",
	"api/go1.22.txt",
	"lib/time/zoneinfo.zip",
	"README.md",
	"src/internal/abi/abi.go",
	"src/os/exec/exec.o",
	"src/debug/dwarf/testdata/golden/x.got",
	"build",
	"src/vendor",
}

func BenchmarkIgnored(b *testing.B) {
	root := (*Matcher)(nil).Child("", []byte(benchGitignore))
	nested := root.Child("src", []byte("!*.o\n/gen/\n")).Child("src/net", []byte("*.tmp\n"))
	for _, bc := range []struct {
		name string
		m    *Matcher
	}{{"root", root}, {"nested", nested}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				for _, p := range benchPaths {
					if bc.m.Ignored(p, p == "build" || p == "src/vendor") {
						n++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(benchPaths)), "ns/path")
		})
	}
}

func BenchmarkParsePatterns(b *testing.B) {
	data := []byte(benchGitignore)
	b.ReportAllocs()
	for b.Loop() {
		ParsePatterns("", data)
	}
}
