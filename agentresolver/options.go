package agentresolver

import (
	"maps"
	"slices"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
)

// Option configures a tool built with [Func] or wrapped with [WithOptions].
type Option func(*config)

// config holds what the options set.
type config struct {
	sensitive   []string
	timeout     time.Duration
	annotations []func(*llmtoolkit.Annotations)
	metadata    map[string]any
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithSensitiveFields marks arguments whose values are secrets: the trace
// recorder redacts them, and scrubs their values from results and errors. A
// plain name ("token") matches that key at any depth, a dotted name
// ("auth.token") that exact path, both without regard to case (see
// [llmtoolkit.Tool.SensitiveFields], where [New] puts them). [New] refuses a
// name that no argument of the tool can match, so that a typo cannot leak a
// secret.
func WithSensitiveFields(names ...string) Option {
	return func(c *config) { c.sensitive = append(c.sensitive, names...) }
}

// WithTimeout puts a deadline of d on the context the tool runs with. Zero
// or a negative d means no deadline of its own (the caller's still applies).
func WithTimeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// WithAnnotations sets the tool's behaviour hints, replacing those the
// definition had.
func WithAnnotations(a llmtoolkit.Annotations) Option {
	return func(c *config) {
		c.annotations = append(c.annotations, func(dst *llmtoolkit.Annotations) { *dst = a })
	}
}

// WithReadOnly marks the tool as not modifying its environment (so that
// [llmtoolkit.ReadOnly] keeps it in a plan phase).
func WithReadOnly() Option {
	return func(c *config) {
		c.annotations = append(c.annotations, func(dst *llmtoolkit.Annotations) { dst.ReadOnly = true })
	}
}

// WithDestructive marks the tool as one that may overwrite or delete data.
func WithDestructive() Option {
	return func(c *config) {
		c.annotations = append(c.annotations, func(dst *llmtoolkit.Annotations) { dst.Destructive = true })
	}
}

// WithIdempotent marks the tool as having no further effect when called
// twice with the same arguments.
func WithIdempotent() Option {
	return func(c *config) {
		c.annotations = append(c.annotations, func(dst *llmtoolkit.Annotations) { dst.Idempotent = true })
	}
}

// WithOpenWorld marks the tool as reaching outside the host (the web, a
// third-party API).
func WithOpenWorld() Option {
	return func(c *config) {
		c.annotations = append(c.annotations, func(dst *llmtoolkit.Annotations) { dst.OpenWorld = true })
	}
}

// WithMetadata adds entries to the tool's [llmtoolkit.Tool.Metadata] (data
// for hosts, never sent to models). Later entries win.
func WithMetadata(m map[string]any) Option {
	return func(c *config) {
		if c.metadata == nil {
			c.metadata = map[string]any{}
		}
		maps.Copy(c.metadata, m)
	}
}

// apply returns t with the configured annotations and metadata. It never
// modifies t's maps.
func (c *config) apply(t llmtoolkit.Tool) llmtoolkit.Tool {
	if len(c.annotations) > 0 {
		var a llmtoolkit.Annotations
		if t.Annotations != nil {
			a = *t.Annotations
		}
		for _, f := range c.annotations {
			f(&a)
		}
		t.Annotations = &a
	}
	if len(c.metadata) > 0 {
		md := maps.Clone(t.Metadata)
		if md == nil {
			md = make(map[string]any, len(c.metadata))
		}
		maps.Copy(md, c.metadata)
		t.Metadata = md
	}
	return t
}

// sensitiveFields returns the configured names, without duplicates, in
// order, merged after those of inner.
func (c *config) sensitiveFields(inner []string) []string {
	if len(c.sensitive) == 0 && len(inner) == 0 {
		return nil
	}
	out := slices.Clone(inner)
	for _, n := range c.sensitive {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
