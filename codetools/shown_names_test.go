package codetools

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestShownNameAndReadName(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, shown string }{
		{"plain.txt", "plain.txt"},
		{"dir/sub/a.go", "dir/sub/a.go"},
		{"café é.txt", "café é.txt"},
		{`back\slash`, `back\slash`},
		{`mid"quote`, `mid"quote`},
		{"x.txt\nsecrets/prod.env:1: AWS_SECRET=forged", `"x.txt\nsecrets/prod.env:1: AWS_SECRET=forged"`},
		{"tab\there", `"tab\there"`},
		{"cr\rhere", `"cr\rhere"`},
		{"bad\xffutf8", `"bad\xffutf8"`},
		{"rtl\u202etxt.exe", `"rtl\u202etxt.exe"`},
		{`"quoted"`, `"\"quoted\""`},
		{`dir/"quoted"`, `"dir/\"quoted\""`},
		{"del\x7f", `"del\x7f"`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.shown, shownName(tt.name), "%q", tt.name)
		assert.Equal(t, tt.name, readName(tt.shown), "%q", tt.shown)
	}
	// Quoted parts of a path are read back too, as shown by list_directory
	// and tree (one name) after a folder's path.
	assert.Equal(t, "dir/x\ny/z", readName(`dir/"x\ny"/z`))
	assert.Equal(t, "dir/x\ny", readName(`dir/"x\ny"`))
	assert.Equal(t, "a//x\n", readName(`a//"x\n"`))
	// What is not a whole quoted part is kept as it is.
	for _, p := range []string{`"unterminated`, `a"b"`, `"a"b`, `"a"x/b`, `""x`} {
		assert.Equal(t, p, readName(p), p)
	}
}

// FuzzShownNameRoundTrip: every name or path shown reads back as itself.
func FuzzShownNameRoundTrip(f *testing.F) {
	for _, s := range []string{"a", "x.txt\nsecrets", `"q"`, "a/\"b\"/c", "\xff", "\u202e", `\"`, `a/""`, "/\"/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		shown := shownName(s)
		if readName(shown) != s {
			t.Fatalf("%q shown as %s reads back as %q", s, shown, readName(shown))
		}
		if !needsQuotes(s) && shown != s {
			t.Fatalf("%q changed", s)
		}
		for i := 0; i < len(shown); i++ {
			if shown[i] < 0x20 {
				t.Fatalf("%q shown with a control byte: %q", s, shown)
			}
		}
	})
}
