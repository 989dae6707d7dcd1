package textedit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/textedit"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name, content, oldText, newText, want string
		tolerant                              bool
		err                                   error
		ambiguous                             int
	}{
		{name: "exact", content: "a\nb\nc\n", oldText: "b", newText: "B", want: "a\nB\nc\n"},
		{name: "CRLF and BOM kept", content: "\ufeffa\r\nb\r\n", oldText: "a\nb", newText: "x\ny", want: "\ufeffx\r\ny\r\n"},
		{name: "tolerant quotes and trailing spaces", content: "say “hi”  \nend\n", oldText: "say \"hi\"\nend", newText: "bye", want: "bye\n", tolerant: true},
		{name: "no match", content: "abc", oldText: "xyz", err: textedit.ErrNoMatch},
		{name: "no change", content: "abc", oldText: "b", newText: "b", err: textedit.ErrNoChange},
		{name: "empty oldText", content: "abc", oldText: "", err: textedit.ErrEmptyOldText},
		{name: "ambiguous", content: "x x x", oldText: "x", newText: "y", ambiguous: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, m, err := textedit.Apply(tt.content, tt.oldText, tt.newText)
			switch {
			case tt.ambiguous > 0:
				var ae *textedit.AmbiguousError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, tt.ambiguous, ae.N)
			case tt.err != nil:
				require.ErrorIs(t, err, tt.err)
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				assert.Equal(t, tt.tolerant, m.Tolerant)
			}
		})
	}
}

func TestStyled(t *testing.T) {
	assert.Equal(t, "a\r\nb", textedit.Styled("x\r\ny", "a\nb"))
	assert.Equal(t, "a\nb", textedit.Styled("x\ny", "a\r\nb"))
}

func TestClosestLines(t *testing.T) {
	content := "func main() {\n\tfmt.Println(\"hello\")\n}\n"
	hint := textedit.ClosestLines(context.Background(), content, "fmt.Println(\"helo\")")
	assert.Contains(t, hint, "fmt.Println(\"hello\")")
	assert.Contains(t, hint, "2")
}

func TestDiff(t *testing.T) {
	before := strings.Repeat("same\n", 50) + "old\n" + strings.Repeat("same\n", 50)
	after := strings.Replace(before, "old", "new", 1)
	d := textedit.NewDiff(before, after, 1)
	assert.Equal(t, 51, d.FirstChanged())
	removed, added, bounded := d.Counts()
	assert.Equal(t, [3]any{1, 1, false}, [3]any{removed, added, bounded})
	assert.Equal(t, "  50 same\n- 51 old\n+ 51 new\n  52 same", d.Compact(1, 0))
	unified, cut := d.Unified("f.txt", 1, 1<<10)
	assert.False(t, cut)
	assert.Equal(t, "--- a/f.txt\n+++ b/f.txt\n@@ -50,3 +50,3 @@\n same\n-old\n+new\n same", unified)

	same := textedit.NewDiff("a\n", "a\n", 3)
	assert.Equal(t, 0, same.FirstChanged())
	assert.Empty(t, same.Compact(3, 0))
}
