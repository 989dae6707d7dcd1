package trace

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestConvSecretsBounds: secrets are kept per conversation, the most
// recent maxConvSecrets of each (no duplicates), too short or too long
// ones not at all, and only for the maxConversations most recently
// active conversations.
func TestConvSecretsBounds(t *testing.T) {
	var c convSecrets
	a, b := convKey{"t", "a"}, convKey{"t", "b"}
	c.note(a, []string{"secret-one", "x", string(make([]byte, maxConvSecretBytes+1))})
	assert.Equal(t, []string{"secret-one"}, c.seen(a))
	assert.Empty(t, c.seen(b), "another conversation's secrets are its own")
	c.note(a, []string{"secret-one"})
	assert.Len(t, c.seen(a), 1, "kept once")
	for i := range maxConvSecrets + 10 {
		c.note(b, []string{fmt.Sprintf("secret-%03d", i)})
	}
	got := c.seen(b)
	assert.Len(t, got, maxConvSecrets)
	assert.Equal(t, fmt.Sprintf("secret-%03d", maxConvSecrets+9), got[len(got)-1], "the latest kept")
	for i := range maxConversations {
		c.note(convKey{"t", fmt.Sprint(i)}, []string{"secret-many"})
	}
	assert.Empty(t, c.seen(a), "the least recently active conversation is forgotten first")
	assert.Len(t, c.byConv, maxConversations)
	assert.Len(t, c.order, maxConversations)
}

func TestWithTrimmed(t *testing.T) {
	assert.Equal(t, []string{"pass-word\n", "ok-secret", "pass-word"}, withTrimmed([]string{"pass-word\n", "ok-secret"}))
	in := []string{"no-blanks"}
	assert.Equal(t, in, withTrimmed(in))
	assert.Equal(t, []string{" ab "}, withTrimmed([]string{" ab "}), "too short once trimmed")
}
