package trace

import (
	"slices"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit/internal/redact"
)

// Bounds of the secrets a Recorder keeps per conversation, so that a
// secret given in one call is scrubbed from the conversation's later rows
// (a background job's output read later, a file written with it and read
// back): the most recent maxConvSecrets of each conversation, each of at
// most maxConvSecretBytes, for the maxConversations most recently active.
const (
	maxConversations   = 1024
	maxConvSecrets     = 64
	maxConvSecretBytes = 4 << 10
)

// convSecrets keeps the secret values recorded in each conversation.
type convSecrets struct {
	mu     sync.Mutex
	byConv map[convKey][]string
	order  []convKey // oldest first
}

type convKey struct{ tenant, conversation string }

// seen returns the secrets recorded earlier in the conversation.
func (c *convSecrets) seen(k convKey) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.byConv[k])
}

// note keeps a row's secrets for the conversation's later rows.
func (c *convSecrets) note(k convKey, secrets []string) {
	var keep []string
	for _, s := range secrets {
		if len(s) >= redact.MinSecretLen && len(s) <= maxConvSecretBytes {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byConv == nil {
		c.byConv = map[convKey][]string{}
	}
	old, known := c.byConv[k]
	if known {
		c.order = slices.DeleteFunc(c.order, func(x convKey) bool { return x == k })
	} else if len(c.order) >= maxConversations {
		delete(c.byConv, c.order[0])
		c.order = c.order[1:]
	}
	c.order = append(c.order, k)
	for _, s := range keep {
		if !slices.Contains(old, s) {
			old = append(old, s)
		}
	}
	if len(old) > maxConvSecrets {
		old = slices.Clone(old[len(old)-maxConvSecrets:])
	}
	c.byConv[k] = old
}

// withTrimmed returns secrets and, for each one with blanks or line ends
// around it, its form without them.
func withTrimmed(secrets []string) []string {
	var extra []string
	for _, s := range secrets {
		if t := strings.TrimSpace(s); t != s && len(t) >= redact.MinSecretLen {
			extra = append(extra, t)
		}
	}
	if extra == nil {
		return secrets
	}
	return append(slices.Clip(secrets), extra...)
}
