package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostilePage(t *testing.T) {
	for _, kind := range []string{"empty-links", "host-links", "deep-list", "deep-quote", "text-comments", "spans"} {
		page := HostilePage(kind, 64<<10)
		assert.True(t, strings.HasPrefix(page, "<!DOCTYPE html>"), kind)
		assert.InDelta(t, 64<<10, len(page), 300, "%s: about the size asked", kind)
	}
	assert.Panics(t, func() { HostilePage("nope", 10) })
}

func TestRipgrepLines(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f.txt")
	require.NoError(t, os.WriteFile(file, []byte("a\nneedle\nb\nneedle again\n"), 0o644))
	assert.Equal(t, []int{2, 4}, RipgrepLines(t, "needle", file))
	assert.Nil(t, RipgrepLines(t, "absent", file))
}
