package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	const p = "example.com/m/pkg"
	tests := map[string]struct {
		events []string // go test -json lines
		out    string   // what is printed
		skips  string   // what the skips file holds
	}{
		"a passing package prints its result line only": {
			events: []string{
				`{"Action":"run","Package":"` + p + `","Test":"TestA"}`,
				`{"Action":"output","Package":"` + p + `","Test":"TestA","Output":"=== RUN   TestA\n"}`,
				`{"Action":"output","Package":"` + p + `","Test":"TestA","Output":"    a_test.go:9: noise\n"}`,
				`{"Action":"pass","Package":"` + p + `","Test":"TestA"}`,
				`{"Action":"output","Package":"` + p + `","Output":"PASS\n"}`,
				`{"Action":"output","Package":"` + p + `","Output":"ok  \t` + p + `\t0.1s\n"}`,
				`{"Action":"pass","Package":"` + p + `"}`,
			},
			out: "ok  \t" + p + "\t0.1s\n",
		},
		"a failing test prints its whole output": {
			events: []string{
				`{"Action":"output","Package":"` + p + `","Test":"TestB","Output":"=== RUN   TestB\n"}`,
				`{"Action":"output","Package":"` + p + `","Test":"TestB","Output":"    b_test.go:3: wrong\n"}`,
				`{"Action":"output","Package":"` + p + `","Test":"TestB","Output":"--- FAIL: TestB (0.00s)\n"}`,
				`{"Action":"fail","Package":"` + p + `","Test":"TestB"}`,
				`{"Action":"output","Package":"` + p + `","Output":"FAIL\n"}`,
				`{"Action":"output","Package":"` + p + `","Output":"FAIL\t` + p + `\t0.1s\n"}`,
				`{"Action":"fail","Package":"` + p + `"}`,
			},
			out: "=== RUN   TestB\n    b_test.go:3: wrong\n--- FAIL: TestB (0.00s)\nFAIL\t" + p + "\t0.1s\n",
		},
		"a skipped test and the parent of a skipped subtest are listed once": {
			events: []string{
				`{"Action":"skip","Package":"` + p + `","Test":"TestSlow"}`,
				`{"Action":"skip","Package":"` + p + `","Test":"TestMany/big"}`,
				`{"Action":"skip","Package":"` + p + `","Test":"TestMany/huge"}`,
				`{"Action":"pass","Package":"` + p + `","Test":"TestMany"}`,
				`{"Action":"skip","Package":"other","Test":"TestX"}`,
			},
			skips: "example.com/m/pkg\tTestMany\nexample.com/m/pkg\tTestSlow\nother\tTestX\n",
		},
		"lines that are not events pass through": {
			events: []string{"# example.com/m/pkg", `{"Action":"output","Package":"` + p + `","Output":"FAIL\t` + p + ` [build failed]\n"}`},
			out:    "# example.com/m/pkg\nFAIL\t" + p + " [build failed]\n",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			skips := filepath.Join(t.TempDir(), "skips")
			var out strings.Builder
			require.NoError(t, run(strings.NewReader(strings.Join(tt.events, "\n")+"\n"), &out, skips))
			assert.Equal(t, tt.out, out.String())
			data, err := os.ReadFile(skips)
			require.NoError(t, err)
			assert.Equal(t, tt.skips, string(data))
		})
	}
}
