package trace

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A cap keeps up to its size of a text that is not UTF-8, as every cutter
// of the project does (internal/textutil.CutUTF8): walking back to a rune
// start would keep nothing of 100 continuation bytes capped at 50.
func TestCutKeepsBytesThatAreNotUTF8(t *testing.T) {
	kept, cutOff := cut(strings.Repeat("\x80", 100), 50)
	assert.True(t, cutOff)
	assert.Equal(t, strings.Repeat("\x80", 50), kept)

	kept, cutOff = cut("aé", 2) // never splits a letter
	assert.True(t, cutOff)
	assert.Equal(t, "a", kept)
	assert.Equal(t, strings.Repeat("\x80", 50)+"…[50 bytes cut]", cutString(strings.Repeat("\x80", 100), 50))
}
