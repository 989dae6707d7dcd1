package textutil

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContextReader(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := ContextReader(ctx, strings.NewReader("abcdef"))
	buf := make([]byte, 3)
	n, err := r.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(buf[:n]), "reads while the context lives")
	cancel()
	n, err = r.Read(buf)
	assert.Equal(t, 0, n)
	require.ErrorIs(t, err, context.Canceled, "once it ended, the context's error, not the data")
	_, err = io.ReadAll(r)
	require.ErrorIs(t, err, context.Canceled)
}
