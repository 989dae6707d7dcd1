package codetools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// editMemoryEnv names the case a re-executed test binary measures.
const editMemoryEnv = "LLMTOOLKIT_EDIT_MEMORY_CASE"

// editMemoryReport is what the child prints: the peak resident memory the
// call added over the resident memory before it, the bytes it allocated,
// its time, and its answer.
type editMemoryReport struct {
	PeakDelta  int64  `json:"peak_delta"`
	TotalAlloc int64  `json:"total_alloc"`
	Millis     int64  `json:"millis"`
	IsError    bool   `json:"is_error"`
	Content    string `json:"content"`
	Display    int    `json:"display_bytes"`
}

// editMemorySize is the size of the files and of the largest oldText.
const editMemorySize = 35 << 19 // 17.5 MiB

// editMemoryCase builds the file and the call of a named case.
func editMemoryCase(name string) (file string, call llmtoolkit.Call) {
	var sb strings.Builder
	if strings.HasSuffix(name, "lines") || name == "success" { // a source file of short lines
		for i := 0; sb.Len() < editMemorySize; i++ {
			fmt.Fprintf(&sb, "func handler%d(w http.ResponseWriter, r *http.Request) { serve(w, r, %d) }\n", i, i)
		}
	} else { // one long line, like minified JSON
		for i := 0; sb.Len() < editMemorySize; i++ {
			fmt.Fprintf(&sb, `{"id":%d,"name":"item %d","tags":["a","b"]},`, i, i)
		}
	}
	file = sb.String()
	if strings.HasPrefix(name, "tolerant") { // one trailing space: the tolerant search runs
		file = strings.Replace(file, "\n", " \n", 1)
	}
	// slip copies part of the file with a slip near its end: no match.
	slip := func(from, to int) string {
		return file[from:to-100] + "#" + file[to-99:to]
	}
	args := map[string]any{"path": "f.txt", "newText": "x"}
	switch name {
	case "huge-old-lines", "huge-old-oneline", "tolerant-lines": // the whole file
		args["oldText"] = slip(0, len(file))
	case "long-line": // 1000 KiB of the one line
		args["oldText"] = slip(len(file)/2, len(file)/2+1000<<10)
	case "far-lines": // a few lines near the end
		at := strings.LastIndex(file[:len(file)-4096], "\nfunc") + 1
		args["oldText"] = slip(at, at+2000)
	case "success": // replaces the whole file: the largest diff
		args["oldText"], args["newText"] = file, strings.ReplaceAll(file, "serve(", "handle(")
	}
	return file, llmtoolkit.Call{Name: "edit_file", Arguments: args}
}

// peakRSS reads VmHWM or VmRSS from /proc/self/status, in bytes.
func procStatus(field string) (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// TestEditMemoryChild runs one case when re-executed by measureEdit.
func TestEditMemoryChild(t *testing.T) {
	name := os.Getenv(editMemoryEnv)
	if name == "" {
		t.Skip("run by the edit memory tests")
	}
	dir, c := newTestTools(t)
	file, call := editMemoryCase(name)
	writeTestFile(t, dir, "f.txt", file)
	runtime.GC()
	debug.FreeOSMemory()
	// Reset the high-water mark, so that VmHWM is the peak of the call.
	require.NoError(t, os.WriteFile("/proc/self/clear_refs", []byte("5"), 0))
	rss, err := procStatus("VmRSS")
	require.NoError(t, err)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	alloc := ms.TotalAlloc
	start := time.Now()
	res := llmtoolkit.Execute(context.Background(), c, call)
	elapsed := time.Since(start)
	hwm, err := procStatus("VmHWM")
	require.NoError(t, err)
	runtime.ReadMemStats(&ms)
	rep := editMemoryReport{PeakDelta: hwm - rss, TotalAlloc: int64(ms.TotalAlloc - alloc),
		Millis: elapsed.Milliseconds(), IsError: res.IsError, Content: res.Content}
	if res.Display != nil {
		data, err := json.Marshal(res.Display)
		require.NoError(t, err)
		rep.Display = len(data)
	}
	data, err := json.Marshal(rep)
	require.NoError(t, err)
	fmt.Printf("EDITMEM %s\n", data)
}

// measureEdit runs a case in a child process, killed at a deadline, and
// returns its report.
func measureEdit(t *testing.T, name string) editMemoryReport {
	t.Helper()
	if _, err := os.Stat("/proc/self/clear_refs"); err != nil {
		t.Skip("needs /proc/self/clear_refs to measure peak memory")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestEditMemoryChild$", "-test.v")
	cmd.Env = append(os.Environ(), editMemoryEnv+"="+name)
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the child ran past its deadline")
	require.NoError(t, err, "%s", out)
	for line := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(line, "EDITMEM "); ok {
			var rep editMemoryReport
			require.NoError(t, json.Unmarshal([]byte(v), &rep))
			t.Logf("%s: peak +%.1f MiB, allocated %.1f MiB, %d ms, display %d bytes", name,
				float64(rep.PeakDelta)/(1<<20), float64(rep.TotalAlloc)/(1<<20), rep.Millis, rep.Display)
			return rep
		}
	}
	t.Fatalf("no report from the child:\n%s", out)
	return editMemoryReport{}
}

// TestEditMemoryBounded runs failed and successful edits of a 17.5 MiB
// file in a child process and bounds the peak memory each adds, the size
// of its Display and its answer. On main, the closest-lines hint of a
// 17.5 MiB oldText added 262 MiB (1.9 GiB on one long line) and a whole
// file edit showed a 37 MB Display.
func TestEditMemoryBounded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds 17.5 MiB files")
	}
	const mib = 1 << 20
	tests := []struct {
		name    string
		maxPeak int64  // MiB
		want    string // in the answer
	}{
		{"huge-old-lines", 70, "No closest lines are shown for an oldText of 17.5MB"},
		{"huge-old-oneline", 70, "No closest lines are shown for an oldText of 17.5MB"},
		{"long-line", 70, "The closest lines in the file are:\n1\t{\"id\":0,"},
		{"far-lines", 70, "The closest lines in lines "},
		{"tolerant-lines", 105, "No closest lines are shown"},
		{"success", 140, "Successfully replaced text in f.txt."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each case in its own child process
			rep := measureEdit(t, tt.name)
			if !raceEnabled {
				assert.Less(t, rep.PeakDelta, tt.maxPeak*mib, "peak memory added by the call")
			}
			assert.Contains(t, rep.Content, tt.want)
			assert.Equal(t, tt.name != "success", rep.IsError)
			assert.LessOrEqual(t, rep.Display, 2*maxDisplayDiffBytes, "the Display is bounded")
		})
	}
}
