package proc_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/proc"
)

// newOutput returns an Output whose spill files go to a test folder.
func newOutput(t *testing.T, limit int64) *proc.Output {
	dir := t.TempDir()
	return proc.NewOutput(func() (*os.File, error) { return os.CreateTemp(dir, proc.SpillPattern) }, limit)
}

var noticeRE = regexp.MustCompile(`\n\n\[Showing lines (\d+)-(\d+) of (\d+)\. (Full output|Output cut to its first \S+ and last \S+ of \S+): (\S+)\]$`)

func TestOutput(t *testing.T) {
	tests := []struct {
		name      string
		lines     int
		limit     int64
		wantSpill bool
		wantCut   bool
		wantFirst string
	}{
		{"small: all shown", 10, proc.DefaultSpillMaxBytes, false, false, "1"},
		{"many lines: the tail, and a file", 3 * proc.MaxLines, proc.DefaultSpillMaxBytes, true, false, fmt.Sprint(2*proc.MaxLines + 1)},
		{"past the cap: the file is cut", 40_000, proc.MinSpillMaxBytes, true, true, fmt.Sprint(40_000 - proc.MaxLines + 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOutput(t, tt.limit)
			var all strings.Builder
			for i := 1; i <= tt.lines; i++ {
				line := fmt.Sprintf("%d\n", i)
				all.WriteString(line)
				n, err := o.Write([]byte(line))
				require.NoError(t, err)
				require.Equal(t, len(line), n)
			}
			text := o.Text()
			assert.EqualValues(t, all.Len(), o.Total())
			assert.Equal(t, tt.wantCut, o.Cut())
			if !tt.wantSpill {
				assert.Empty(t, o.Path())
				assert.Equal(t, strings.TrimSuffix(all.String(), "\n"), text)
				return
			}
			m := noticeRE.FindStringSubmatch(text)
			require.NotNil(t, m, "notice in %q", text[max(0, len(text)-300):])
			assert.Equal(t, tt.wantFirst, m[1])
			assert.Equal(t, fmt.Sprint(tt.lines), m[2])
			assert.Equal(t, fmt.Sprint(tt.lines), m[3])
			assert.Equal(t, o.Path(), m[5])
			assert.True(t, strings.HasPrefix(text, tt.wantFirst+"\n"))
			data, err := os.ReadFile(o.Path())
			require.NoError(t, err)
			if tt.wantCut {
				assert.LessOrEqual(t, int64(len(data)), tt.limit)
				assert.Contains(t, string(data), "cut here")
			} else {
				assert.Equal(t, all.String(), string(data), "the spill file holds the whole output")
			}
		})
	}
}

func TestOutputEmptyAndLongLine(t *testing.T) {
	o := newOutput(t, proc.DefaultSpillMaxBytes)
	assert.Equal(t, "(no output)", o.Text())

	o = newOutput(t, proc.DefaultSpillMaxBytes)
	_, _ = o.Write([]byte(strings.Repeat("x", 3*proc.MaxBytes)))
	text := o.Text()
	notice := text[strings.LastIndexByte(text, '\n')+1:]
	assert.Regexp(t, `^\[Showing the last \S+ of line 1 of 1\. Full output: `+regexp.QuoteMeta(o.Path())+`\]$`, notice)
	assert.Equal(t, strings.Repeat("x", proc.MaxBytes), strings.TrimSuffix(text, "\n\n"+notice), "the line's end")
}
